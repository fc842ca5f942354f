"""``--junit``: JUnit XML, one test suite per problem; a problem-level error or timeout is one error case."""

from __future__ import annotations

from junit_xml import TestCase, TestSuite, to_xml_report_string

from ..core.result import Result, TestResult
from . import FormatContext


def render(results: list[Result], context: FormatContext) -> str:
    suites = []
    for result in results:
        cases = [_case(result.problem, t) for t in result.tests]
        if result.status in ("error", "timeout") and result.message:
            case = TestCase(name=f"{result.problem} ({result.status})", classname=result.problem)
            case.add_error_info(message=result.message.splitlines()[0], output=result.message)
            cases.insert(0, case)
        suites.append(TestSuite(result.problem, cases))
    return to_xml_report_string(suites, encoding="utf-8")


def _case(problem: str, test: TestResult) -> TestCase:
    case = TestCase(name=test.name, classname=f"{problem}.{test.file}", elapsed_sec=test.duration,
                    stdout=test.stdout or None, stderr=test.stderr or None, file=test.file)
    detail = "\n".join([test.message] + [f"{f.file}:{f.line} in {f.function}: {f.code}" for f in test.traceback])
    first = test.message.splitlines()[0] if test.message else test.outcome
    if test.outcome == "failed":
        case.add_failure_info(message=first, output=detail)
    elif test.outcome == "error":
        case.add_error_info(message=first, output=detail)
    elif test.outcome == "skipped":
        case.add_skipped_info(message=test.message)
    return case
