"""The boundary's messages are declared once (judge/core/protocol.py): each side serves exactly its declared
requests through one table, and a reply is told apart by the one kind it carries."""

from __future__ import annotations

import pytest

from judge.core import codec, protocol
from judge.sandbox import learner, standin


def test_each_side_serves_exactly_the_requests_declared_for_it():
    assert set(learner._SERVERS) == set(protocol.LEARNER_OPS)
    assert set(standin._SERVERS) == set(protocol.TEST_OPS)


@pytest.mark.parametrize("kind", protocol.REPLY_KINDS)
def test_a_reply_is_of_the_one_kind_it_carries(kind):
    assert protocol.reply_kind(dict(protocol.reply(kind, None), re=3, bound={})) == kind


@pytest.mark.parametrize("reply", [{"re": 1}, {"re": 1, "ok": 1, "raise": {}}, {"re": 1, "value": 2}],
                         ids=["no kind", "two kinds", "an unknown key"])
def test_a_reply_without_exactly_one_kind_violates_the_protocol(reply):
    with pytest.raises(protocol.ProtocolViolation, match="a reply that carries"):
        protocol.reply_kind(reply)


def test_a_request_for_an_op_a_side_does_not_serve_violates_the_protocol():
    side = standin.TestSide("m", lambda side: None, codec.Registry(), {})  # type: ignore[arg-type,return-value]
    with pytest.raises(protocol.ProtocolViolation, match="does not serve 'call'"):
        side.handle({"op": "call", "id": 1, "target": 1})
