"""A model's enforced dbt contract (`contract: {enforced: true}`), read from its node without Spark.

The contract names every column the model's table has, with its data type, and the constraints
on them. What holds on a streaming table (docs/contracts.md):

- the query's columns are compared with the contract's when the query resolves, before anything
  is created or started: a missing, extra or differently typed column stops the model;
- `not_null` and `check` constraints become Delta constraints (delta_constraints.py), which Delta
  checks on every write;
- `unique`, `primary_key`, `foreign_key` and `custom` constraints are not enforced by Delta Lake:
  they are ignored with a warning (`warnings`), never claimed.

Types are compared in Spark's own spelling (`int`, `bigint`, `decimal(10,2)`,
`struct<a:int>`), with the synonyms Spark's SQL parser accepts (`integer`, `long`, `numeric`):
config/spark_types.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from pyspark.sql.types import StructField, StructType

from dbt_spark_streaming.config.names import is_identifier
from dbt_spark_streaming.config.spark_types import canonical_type
from dbt_spark_streaming.errors import ConfigError

ENFORCED_TYPES = ("not_null", "check")
IGNORED_TYPES = ("unique", "primary_key", "foreign_key", "custom")


class ContractError(ConfigError):
    """The contract is incomplete, or the model's columns do not keep it (dbt's own
    ContractError is a compilation error too)."""


@dataclass(frozen=True)
class Check:
    """A CHECK constraint: its Delta name (lowercase, as Delta keeps it) and SQL expression."""

    name: str
    expression: str


@dataclass(frozen=True)
class ContractColumn:
    name: str
    data_type: str
    not_null: bool = False


@dataclass(frozen=True)
class Contract:
    model: str
    columns: tuple[ContractColumn, ...]
    checks: tuple[Check, ...] = ()
    # One sentence per constraint Delta does not enforce (and whose warn_unsupported is on).
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_node(cls, node: Mapping[str, Any]) -> Optional["Contract"]:
        """The node's contract when it is enforced, None otherwise (dbt ignores the constraints
        of a model whose contract is not enforced, and so do we)."""
        contract = node.get("contract") or (node.get("config") or {}).get("contract") or {}
        if not _is_true(contract.get("enforced")):
            return None
        model = node["name"]
        declared = _declared_columns(model, node.get("columns") or {})
        by_name = {column.name.lower(): column for column, _ in declared}
        found = _Constraints(model)
        for column, constraints in declared:
            for constraint in constraints:
                found.read(constraint, [column.name], f"column {column.name}", f"{column.name}_check")
        for constraint in node.get("constraints") or ():
            named = [_known_column(model, by_name, name) for name in _list(constraint.get("columns"))]
            where = f"columns {', '.join(named)}" if named else "the model"
            found.read(constraint, named, where, f"{'_'.join(named) or model}_check")
        return cls(
            model=model,
            columns=tuple(
                ContractColumn(column.name, column.data_type, column.name.lower() in found.not_null)
                for column, _ in declared
            ),
            checks=_named_checks(model, found.checks),
            warnings=tuple(found.warnings),
        )

    @property
    def not_null(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns if column.not_null)

    @property
    def has_constraints(self) -> bool:
        return bool(self.checks or self.not_null)

    def mismatches(self, actual: StructType) -> list[str]:
        """Each way `actual`'s columns differ from the contract's, with its fix; [] if they keep it."""
        declared = {column.name.lower(): column for column in self.columns}
        found = {field.name.lower(): field for field in actual.fields}
        said = []
        for key, column in declared.items():
            field = found.get(key)
            if field is None:
                said.append(
                    f"{column.name}: declared {column.data_type}, missing from the model's columns "
                    f"(select it, or remove it from the contract's columns)"
                )
            elif canonical_type(column.data_type) != canonical_type(field.dataType.simpleString()):
                said.append(
                    f"{column.name}: declared {column.data_type}, the model's is "
                    f"{field.dataType.simpleString()} ({_type_fix(column, field)})"
                )
        for key, field in found.items():
            if key not in declared:
                said.append(
                    f"{field.name}: {field.dataType.simpleString()} in the model's columns, not in "
                    f"the contract (add it to columns: with data_type: "
                    f"{field.dataType.simpleString()}, or leave it out of the query)"
                )
        return said

    def check_columns(self, actual: StructType, of: str = "the query's columns") -> None:
        """Raise a ContractError naming every column that breaks the contract."""
        said = self.mismatches(actual)
        if said:
            raise ContractError(
                f"Model {self.model}: {of} do not match its contract (contract: {{enforced: "
                f"true}}), so nothing was written:\n" + "\n".join(f"  - {line}" for line in said)
                + "\nColumn order does not matter; names and types do (in Spark's spelling)."
            )

    def with_not_null(self, schema: StructType) -> StructType:
        """`schema` with the contract's not_null columns NOT NULL: a table created with it has
        the constraint from version 0 (Delta cannot add NOT NULL to an existing column)."""
        not_null = {name.lower() for name in self.not_null}
        return StructType([
            StructField(f.name, f.dataType, False, f.metadata) if f.name.lower() in not_null else f
            for f in schema.fields
        ])


def with_not_null(schema: StructType, contract: Optional[Contract]) -> StructType:
    """The schema a model's table is created with: its contract's not_null columns NOT NULL."""
    return contract.with_not_null(schema) if contract is not None else schema


def _declared_columns(
    model: str, columns: Mapping[str, Any]
) -> list[tuple[ContractColumn, list[Mapping[str, Any]]]]:
    if not columns:
        raise ContractError(
            f"Model {model}: contract: {{enforced: true}} needs the model's columns, each with a "
            "data_type, under columns: in its YAML; none are declared. List every column the "
            "model selects, e.g. columns: [{name: device_id, data_type: string}]."
        )
    untyped = [name for name, column in columns.items() if not str(column.get("data_type") or "").strip()]
    if untyped:
        raise ContractError(
            f"Model {model}: contract: {{enforced: true}} needs a data_type for every column; "
            f"{', '.join(untyped)} {'has' if len(untyped) == 1 else 'have'} none. Give each the "
            "type the query yields, as Spark SQL names it (e.g. data_type: bigint, double, "
            "string, timestamp, decimal(10,2))."
        )
    return [
        (ContractColumn(str(column.get("name") or name), str(column["data_type"]).strip()),
         list(column.get("constraints") or ()))
        for name, column in columns.items()
    ]


class _Constraints:
    """The constraints of a contract, read one at a time: the not_null columns, the checks
    (name as given or None, expression, the name to give it otherwise), the warnings."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.not_null: set[str] = set()
        self.checks: list[tuple[Optional[str], str, str]] = []
        self.warnings: list[str] = []

    def read(self, constraint: Mapping[str, Any], columns: list[str], where: str, default_name: str) -> None:
        kind = str(constraint.get("type") or "")
        if kind == "not_null":
            if not columns:
                raise ContractError(
                    f"Model {self.model}: a model-level not_null constraint names no columns. Give "
                    "it columns: [...], or put not_null on the columns themselves."
                )
            self.not_null.update(column.lower() for column in columns)
        elif kind == "check":
            expression = str(constraint.get("expression") or "").strip()
            if not expression:
                raise ContractError(
                    f"Model {self.model}: the check constraint on {where} has no expression. Give "
                    "it the condition every row must meet, e.g. expression: \"heart_rate > 0\"."
                )
            self.checks.append((constraint.get("name"), expression, default_name))
        elif kind in IGNORED_TYPES:
            if _is_true(constraint.get("warn_unsupported", True)):
                self.warnings.append(_ignored(self.model, kind, where))
        else:
            raise ContractError(
                f"Model {self.model}: constraint type {kind!r} on {where} is not a dbt constraint "
                f"type; use one of {', '.join(ENFORCED_TYPES + IGNORED_TYPES)}."
            )


def _ignored(model: str, kind: str, where: str) -> str:
    test = {"unique": "unique", "primary_key": "unique and not_null", "foreign_key": "relationships"}
    instead = (f"Check it with dbt's {test[kind]} data test instead"
               if kind in test else "Express it as a not_null or check constraint instead")
    return (
        f"Model {model}: the {kind} constraint on {where} is not enforced: Delta Lake enforces "
        f"only not_null and check constraints, so it is ignored. {instead}, or set "
        "warn_unsupported: false on the constraint to silence this warning."
    )


def _named_checks(model: str, checks: list[tuple[Optional[str], str, str]]) -> tuple[Check, ...]:
    """Each check with its Delta name: as given, else `<column>_check` (`_2`, `_3` for more on
    the same column), so a changed expression keeps its name and replaces the old one."""
    named: list[Check] = []
    taken: set[str] = set()
    for given, expression, default in checks:
        if given:
            name = str(given).lower()
            if not is_identifier(name):
                raise ContractError(
                    f"Model {model}: check constraint name {given!r} is not a plain identifier "
                    "(letters, digits and _, not starting with a digit); Delta names the "
                    "constraint with it. Rename it, e.g. name: heart_rate_positive."
                )
            if name in taken:
                raise ContractError(
                    f"Model {model}: two check constraints are named {name!r} (Delta compares "
                    "constraint names without case). Give each a name of its own."
                )
        else:
            base = re.sub(r"\W", "_", default).lower()
            base = base if is_identifier(base) else f"c_{base}"
            name, number = base, 1
            while name in taken:
                number += 1
                name = f"{base}_{number}"
        taken.add(name)
        named.append(Check(name, expression))
    return tuple(named)


def _known_column(model: str, by_name: Mapping[str, ContractColumn], name: str) -> str:
    column = by_name.get(str(name).lower())
    if column is None:
        raise ContractError(
            f"Model {model}: a model-level constraint names column {name!r}, which the contract's "
            f"columns do not list ({', '.join(c.name for c in by_name.values())}). Correct the "
            "name, or declare the column."
        )
    return column.name


def _type_fix(column: ContractColumn, field: StructField) -> str:
    declared = canonical_type(column.data_type)
    if declared.startswith(("char(", "varchar(")) and field.dataType.simpleString() == "string":
        return ("Spark streams char and varchar values as string and checks no length: declare "
                "data_type: string")
    return (f"cast it in the query, e.g. cast({field.name} as {column.data_type}) as {field.name}, "
            f"or declare data_type: {field.dataType.simpleString()}")


def _list(value: Any) -> list[str]:
    if not value:
        return []
    return [value] if isinstance(value, str) else [str(item) for item in value]


def _is_true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"
