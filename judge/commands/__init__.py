"""The command line and what each command does (native only, never shipped to the browser).

cli (``judge``, argument parsing and the one error handler) -> practice (learner folders), check
(problem folders), scaffold (``judge new``), grade (a class), export (grading platforms), site
(``judge build`` and ``judge serve``), watch.
"""
