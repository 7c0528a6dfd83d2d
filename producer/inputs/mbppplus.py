"""MBPP+ as EvalPlus 0.3.1 reads it (evalplus/data/mbpp.py, evalplus/eval/_special_oracle.py): the
types of its tasks' arguments, which its JSON file cannot hold, the special oracle of each task, and
how a failing input is written in its eval_results.json.

EvalPlus treats a file as MBPP+ when it is run with --dataset mbpp; codeexec, when the task ids are
MBPP's (Mbpp/N). Both pick the arguments' types by task number and the oracle by entry point, for
any version of the file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codeexec.protocol.kinds import Oracle
from codeexec.worker.candidate.values import encode

Arguments = list[Any]

#: The entry points EvalPlus judges by another rule than == (worker/judging/helpers/oracles.py says each).
ORACLES: dict[str, Oracle] = {
    "similar_elements": "set",  # Mbpp/2
    "find_char_long": "set",  # Mbpp/7
    "common_in_nested_lists": "set",  # Mbpp/111
    "extract_singly": "set",  # Mbpp/140
    "larg_nnum": "set",  # Mbpp/232
    "intersection_array": "set",  # Mbpp/249
    "find_dissimilar": "set",  # Mbpp/579
    "Diff": "set",  # Mbpp/769
    "check_str": "not_none",  # Mbpp/737
    "text_match_three": "not_none",  # Mbpp/787
    "text_starta_endb": "not_none",  # Mbpp/794
    "are_equivalent": "any",  # Mbpp/164
    "sum_div": "or_zero",  # Mbpp/295
    "surface_Area": "surface_area",  # Mbpp/581
    "digit_distance_nums": "digit_distance",  # Mbpp/558
}


def task_number(task_id: str) -> int | None:
    """N of MBPP's task id Mbpp/N (MBPP's splits go by it too), or None for any other id."""
    prefix, _, number = task_id.partition("/")
    return int(number) if prefix == "Mbpp" and number.isdigit() else None


def oracle(entry_point: str) -> Oracle:
    return ORACLES.get(entry_point, "equal")


def typed_inputs(task_id: str, inputs: list[Arguments]) -> list[Arguments]:
    """The task's argument lists as EvalPlus calls the entry point with them (tuples where the file has
    lists, sets, complex numbers), each argument encode()d for EvalPlusTests(typed=True). Raises ValueError
    (or TypeError) where an input does not have the form EvalPlus reads for the task."""
    retype = _FORMS.get(task_number(task_id), list)
    return [[encode(argument) for argument in retype(arguments)] for arguments in inputs]


def results_form(task_id: str, arguments: Arguments) -> Arguments:
    """A failing input as EvalPlus writes it in eval_results.json (mbpp_serialize_inputs(), then
    JSON: tuples as lists): sets as lists, complex numbers and Mbpp/124's float as strings; any other
    task's (HumanEval+'s too) as it is."""
    number = task_number(task_id)
    if number == 115:
        return [[list(item) for item in arguments[0]]]
    if number == 124:
        return [str(arguments[0]), str(arguments[1])]
    if number == 252:
        return [str(arguments[0])]
    return arguments


# ---- the arguments' types, by task number (EvalPlus's mbpp_deserialize_inputs) --------------------------
# Each form takes an input as the file has it (a list of arguments) and gives the arguments EvalPlus
# calls the entry point with. Some keep only the first two arguments, as EvalPlus's do.


def _each_tuple(args: Arguments) -> Arguments:
    return [tuple(argument) for argument in args]


def _each_rows_tuples(args: Arguments) -> Arguments:
    return [[tuple(row) for row in argument] for argument in args]


def _first_rows_tuples(args: Arguments) -> Arguments:
    return [[tuple(row) for row in args[0]], args[1]]


def _second_tuple(args: Arguments) -> Arguments:
    return [args[0], tuple(args[1])]


def _first_tuple(args: Arguments) -> Arguments:
    return [tuple(args[0]), args[1]]


def _first_tuple_of_three(args: Arguments) -> Arguments:
    return [tuple(args[0]), args[1], args[2]]


def _each_tuple_of_tuples(args: Arguments) -> Arguments:
    return [tuple(tuple(row) for row in argument) for argument in args]


def _list_items_tuples(args: Arguments) -> Arguments:
    return [tuple(tuple(item) if isinstance(item, list) else item for item in args[0])]


def _sets(args: Arguments) -> Arguments:
    # An empty list becomes {}, an empty dict, as EvalPlus makes it.
    return [[set(item) if isinstance(item, list) and item else {} for item in args[0]]]


def _float_complex(args: Arguments) -> Arguments:
    return [float(args[0]), complex(args[1])]


def _complex(args: Arguments) -> Arguments:
    return [complex(args[0])]


def _dict_values_tuples(args: Arguments) -> Arguments:
    return [{key: tuple(value) for key, value in args[0].items()}, *args[1:]]


def _all_tuples(args: Arguments) -> Arguments:
    def tuples(value: Any) -> Any:
        return tuple(tuples(item) for item in value) if isinstance(value, list) else value

    return [tuples(argument) for argument in args]


def _forms() -> dict[int, Callable[[Arguments], Arguments]]:
    groups: list[tuple[Callable[[Arguments], Arguments], tuple[int, ...]]] = [
        (_each_tuple, (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630,
                       726, 740, 744, 809)),
        (_each_rows_tuples, (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780)),
        (_first_rows_tuples, (75, 413, 444, 753)),
        (_second_tuple, (106, 750)),
        (_sets, (115,)),
        (_float_complex, (124,)),
        (_first_tuple, (250, 405, 446, 617, 720, 763, 808)),
        (_each_tuple_of_tuples, (259, 401, 445)),
        (_list_items_tuples, (278,)),
        (_first_tuple_of_three, (307,)),
        (_dict_values_tuples, (722,)),
        (_complex, (252,)),
        (_all_tuples, (580, 615, 791)),
    ]  # fmt: skip
    return {number: form for form, numbers in groups for number in numbers}


_FORMS = _forms()
