"""Names vulture (the dead-code check: ``python -m vulture``, configured in pyproject.toml) cannot see used.

Each line names one: used by a caller vulture does not read (pytest calling its hooks, the web front end
and the Node.js harness calling Python by name, Babel, the standard library reading an attribute), or
left to another branch's change. A name listed here counts as used wherever it is defined, so keep the
list short and say who uses each one. Never imported or run.
"""
# ruff: noqa

_ = object

# pytest hooks, called by pytest by name (judge/core/collector.py, core/runner.py, sandbox/standin.py, engines/test_timer.py)
_.pytest_keyboard_interrupt
_.pytest_make_collect_report
_.pytest_collection_modifyitems
_.pytest_collection_finish
_.pytest_runtest_makereport
_.pytest_runtest_logreport
_.pytest_runtestloop
_.pytest_runtest_setup
_.pytest_runtest_protocol
_.pytest_runtest_call
# pytest's methods of a test item, which judge/core/collector.py replaces (pytest calls them to report a failure)
_.repr_failure
_._repr_failure_py

# called from JavaScript by name: web/js/boot.mjs and web/worker.js (engines/pyodide_boot.py, late_stdlib.py)
_.prepare
_.prepare_snapshot
_.site_files
_.after_restore
_.prepare_numpy
_.prepare_problem
_.export_compiled  # web/worker.js hands one engine's compiled tests to the next (js/boot.mjs)
_.adopt_compiled
_.bare_pytest  # also bench/rerun_ab.py, through the page
_.arrived
# called from Node.js by name: judge/engines/pyodide_programs/compile_archives.cjs
_.check_python
_.used_modules
_.compile_archive

# engines named by a string in judge/engines/__init__.py's ENGINES ("native:NativeEngine")
_.NativeEngine
_.PyodideEngine

# the authoring API the problems' tests import (problems/*/tests: from judge.lang import say)
_.say

# Babel's extractor (babel.cfg: judge.commands.site.i18n:extract_html), with Babel's signature
_.extract_html
_.comment_tags
# html.parser.HTMLParser's callbacks (judge/commands/site/i18n.py)
_.handle_starttag
_.handle_endtag
_.handle_data

# attributes the standard library or a library reads
_.compress_type  # zipfile.ZipInfo
_.daemon_threads  # socketserver
_.allow_reuse_address  # socketserver
_.dont_write_bytecode  # sys
_.markup  # markdown-it tokens
_._files  # zipimport.zipimporter's directory (judge/engines/late_stdlib.py)
_._name_sequence  # tempfile's random names, reset after a snapshot restore (engines/pyodide_boot.py)

# the Result's schema field (serialised with the dataclass)
_.schema_version

# the closed types' and the protocol's declarations as tuples, and the parsers of every command: the
# tests hold them to the schema and to the dispatch tables (tests/test_kinds.py, tests/test_protocol.py)
_.FINDING_KINDS
_.VISIBILITIES
_.LEARNER_OPS
_.TEST_OPS
_.parsers
