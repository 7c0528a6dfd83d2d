from codeexec.worker.judging.sample_program import extract_code


def test_first_fenced_block_with_language_tag_and_prose_around() -> None:
    text = "Here is my answer:\n```python\ndef f():\n    return 1\n```\nand a second one\n```\nx = 2\n```\n"
    assert extract_code(text) == "def f():\n    return 1\n"


def test_fence_without_language_tag() -> None:
    assert extract_code("```\nprint(1)\n```") == "print(1)\n"


def test_no_fence_is_the_whole_text() -> None:
    text = "def f(x):\n    return x  # `inline` backticks are not a fence\n"
    assert extract_code(text) == text


def test_fence_opened_but_never_closed_is_none() -> None:
    assert extract_code("Sure!\n```python\ndef f():\n    return") is None


def test_closing_fence_needs_as_many_backticks() -> None:
    text = "````python\nprint('```')\n```\nstill code\n````\n"
    assert extract_code(text) == "print('```')\n```\nstill code\n"


def test_indented_fence_removes_its_indentation_from_the_body() -> None:
    text = "1. Do this:\n   ```py\n   def f():\n       return 2\n   ```\n"
    assert extract_code(text) == "def f():\n    return 2\n"


def test_empty_block() -> None:
    assert extract_code("```python\n```") == ""


def test_fence_line_with_text_after_closing_ticks_does_not_close() -> None:
    # "```python" inside the block opens nothing and closes nothing: only a bare fence closes.
    assert extract_code("```\na = 1\n```python\nb = 2\n```") == "a = 1\n```python\nb = 2\n"
