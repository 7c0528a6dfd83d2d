"""EvalPlus's rows (HumanEval+, MBPP+: task_id, prompt, entry_point, canonical_solution, base_input,
plus_input, atol): inputs, whose outputs the canonical solution gives (MBPP's task ids: their arguments'
types and oracles, producer/inputs/mbppplus.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from codeexec.producer.inputs import mbppplus
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import EvalPlusTests, Oracle
from codeexec.protocol.models import Problem


class _EvalPlusRecord(BaseModel):
    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    base_input: list[list[Any]]
    plus_input: list[list[Any]] = []
    atol: float = Field(0.0, ge=0)

    @field_validator("plus_input", mode="before")
    @classmethod
    def _none_as_empty(cls, value: Any) -> Any:
        return [] if value == {} else value  # MBPP+'s Mbpp/793 has {}: no inputs, as EvalPlus reads it


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    return _evalplus_problem(_EvalPlusRecord.model_validate(record))


def _evalplus_problem(record: _EvalPlusRecord) -> Problem:
    """HumanEval+'s or MBPP+'s task (MBPP's task ids: its arguments' types and oracles, producer/inputs/mbppplus.py)."""
    base, plus, typed = record.base_input, record.plus_input, False
    oracle: Oracle = "find_zero" if record.entry_point == "find_zero" else "equal"
    if mbppplus.task_number(record.task_id) is not None:
        try:
            base, plus = (mbppplus.typed_inputs(record.task_id, inputs) for inputs in (base, plus))
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise ValueError(f"{record.task_id}: an input is not of the form EvalPlus reads for it: {exc!r}") from None
        typed, oracle = True, mbppplus.oracle(record.entry_point)
    return Problem(
        task_id=record.task_id,
        prompt=record.prompt,
        entry_point=record.entry_point,
        tests=EvalPlusTests(
            entry_point=record.entry_point,
            solution=record.prompt + record.canonical_solution,
            base=base,
            plus=plus,
            typed=typed,
            atol=record.atol,
            oracle=oracle,
        ),
    )


SHAPE = Shape(
    "EvalPlus's (task_id, prompt, entry_point, canonical_solution, base_input, optional plus_input, atol)",
    50,
    lambda record: "base_input" in record,
    problem,
)
