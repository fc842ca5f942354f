"""The console under the editor (issue 35): the learner's file run in a fresh namespace, what they
type evaluated there (values, prints, errors, multi-line input, history), the run's print output in
the same pane, Stop, the run's sandbox, no verdict changed; in English and Chinese, with axe-core.

Uses the session's page (conftest's ``app``); no timing is asserted."""

from __future__ import annotations

import json

from tests.browser.conftest import App
from tests.browser.test_page import axe, shots

CODE = ('def order(p, m):\n    print("ordering", p, m)\n    return [[("F", i) for i in range(m)] for _ in range(p)]\n\n\n'
        'def boom(x):\n    return 1 // x\n\n\ndef forever():\n    while True:\n        pass\n')
OUTPUT = "[data-testid=console-output]"
PROMPT = "[data-testid=console-input]"


def answers(app: App) -> int:
    return int(app.page.get_attribute(OUTPUT, "data-answers") or 0)


def enter(app: App, text: str, timeout: int = 90_000) -> str:
    """Type ``text`` into the console's prompt line by line (Enter as a learner presses it) and wait
    for the answer; the output pane's data-status."""
    before = answers(app)
    app.page.focus(PROMPT)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        app.page.keyboard.insert_text(line.lstrip() if i else line)  # the prompt indents by itself
        app.page.keyboard.press("Enter")
    app.page.wait_for_function(f"() => Number(document.querySelector('{OUTPUT}').dataset.answers || 0) > {before}",
                               timeout=timeout)
    return app.page.get_attribute(OUTPUT, "data-status") or ""


def output(app: App) -> str:
    return app.page.inner_text(OUTPUT)


def open_console(app: App, problem: str) -> None:
    app.select(problem)
    if app.page.get_attribute("[data-testid=console]", "open") is None:
        app.page.click("[data-testid=console] summary")
    app.page.click("[data-testid=console-clear]")


def test_the_console_runs_your_file_calls_your_function_and_shows_print_output(app: App) -> None:
    app.wait_ready()
    open_console(app, "bt-expected")
    app.set_code(CODE)
    assert enter(app, "order(2, 3)") == "ok"
    text = output(app)
    assert "Ran order.py in a fresh namespace." in text
    assert ">>> order(2, 3)" in text and "ordering 2 3" in text
    assert "[[('F', 0), ('F', 1), ('F', 2)], [('F', 0), ('F', 1), ('F', 2)]]" in text
    # the namespace lives on while the file is unchanged: variables, functions defined here
    assert enter(app, "x = 5") == "ok"
    assert enter(app, "def g(n):\nreturn n + x\n") == "ok"  # a block: Enter adds lines until an empty one
    assert enter(app, "g(2) * 10") == "ok"
    assert "\n70" in output(app)
    assert "... return n + x" in output(app).replace("...     ", "... ")
    # history: ↑ brings back the last input
    app.page.focus(PROMPT)
    app.page.keyboard.press("ArrowUp")
    assert app.page.input_value(PROMPT) == "g(2) * 10"
    app.page.keyboard.press("ArrowDown")
    assert app.page.input_value(PROMPT) == ""
    # errors, with the frames in the learner's file
    assert enter(app, "boom(0)") == "error"
    assert "ZeroDivisionError" in output(app) and "order.py:7 in boom" in output(app)
    # the run's sandbox: no writes outside the console's own folder
    assert enter(app, "open('/home/pyodide/elsewhere.txt', 'w')") == "error"
    assert "PermissionError" in output(app) and "outside the learner's folder" in output(app)
    found = axe(app)
    assert not found, json.dumps(found, indent=1)
    shots(app, "console", show=OUTPUT)
    # an edited file: the next input runs it afresh
    app.set_code(CODE.replace('"ordering"', '"now ordering"'))
    assert enter(app, "order(1, 1)") == "ok"
    assert "Your file changed: ran it again in a fresh namespace." in output(app) and "now ordering 1 1" in output(app)
    assert enter(app, "x") == "error" and "NameError" in output(app)
    assert not app.errors, app.errors


def test_a_runs_print_output_shows_in_the_console_and_the_console_never_changes_a_verdict(app: App) -> None:
    app.wait_ready()
    open_console(app, "bt-expected")
    app.set_code(CODE)
    first = app.run()
    outcomes = app.outcomes_in_page()
    text = output(app)
    assert "what the tests' calls of your code printed" in text and "ordering" in text
    # the console redefines the function and breaks builtins in its own namespace and engine...
    assert enter(app, "order = lambda p, m: 'hacked'") == "ok"
    assert enter(app, "import builtins; builtins.sorted = None") == "ok"
    assert enter(app, "order(1, 1)") == "ok" and "'hacked'" in output(app)
    # ...and the next run's verdict is the same
    assert app.run() == first and app.outcomes_in_page() == outcomes
    assert not app.errors, app.errors


def test_stop_ends_a_console_input_and_the_next_input_starts_afresh(app: App) -> None:
    app.wait_ready()
    open_console(app, "bt-expected")
    app.set_code(CODE)
    assert enter(app, "y = 3") == "ok"
    before = answers(app)
    app.page.focus(PROMPT)
    app.page.keyboard.insert_text("forever()")
    app.page.keyboard.press("Enter")
    app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
    assert app.page.get_attribute(OUTPUT, "data-status") == "running"
    app.page.click("[data-testid=stop]")
    app.page.wait_for_function(f"() => Number(document.querySelector('{OUTPUT}').dataset.answers) > {before}")
    assert app.page.get_attribute(OUTPUT, "data-status") == "stopped"
    assert "Stopped by you after" in output(app)
    app.wait_ready()
    assert enter(app, "y") == "error" and "NameError" in output(app)
    # Esc stops too (the prompt keeps the keyboard)
    before = answers(app)
    app.page.keyboard.insert_text("forever()")
    app.page.keyboard.press("Enter")
    app.page.wait_for_function("() => window.ppJudge.pool.current && window.ppJudge.pool.current.startedAt")
    app.page.keyboard.press("Escape")
    app.page.wait_for_function(f"() => Number(document.querySelector('{OUTPUT}').dataset.answers) > {before}")
    assert app.page.get_attribute(OUTPUT, "data-status") == "stopped"
    app.wait_ready()
    assert not app.errors, app.errors


def test_the_console_speaks_chinese(app: App) -> None:
    app.wait_ready()
    app.page.select_option("[data-testid=lang-select]", "zh")
    try:
        open_console(app, "bt-expected")
        app.set_code(CODE)
        assert enter(app, "order(1, 2)") == "ok"
        text = output(app)
        assert "ordering 1 2" in text and "命名空间" in text, text
        assert "控制台" in app.page.inner_text("[data-testid=console] summary")
        assert app.page.evaluate("window.ppJudge.i18n.missing()") == []
        found = axe(app)
        assert not found, json.dumps(found, indent=1)
        shots(app, "console-zh", show=OUTPUT)
    finally:
        app.page.select_option("[data-testid=lang-select]", "en")
