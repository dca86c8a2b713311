"""The one place where the runtime's errors become dbt's: a wrong setting is a Compilation Error
(found before anything of the model ran), anything else a Runtime Error; the message is the
runtime's own, which names the model, the setting and the fix."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from dbt_common.exceptions import CompilationError, DbtRuntimeError

import dbt_spark_streaming as runtime

Method = TypeVar("Method", bound=Callable[..., Any])


def as_dbt_error(error: "runtime.StreamingError") -> DbtRuntimeError:
    if isinstance(error, runtime.ConfigError):
        return CompilationError(str(error))
    return DbtRuntimeError(str(error))


def reported_to_dbt(method: Method) -> Method:
    """The runtime's errors raised by `method` reach dbt as dbt errors (without a traceback)."""

    @functools.wraps(method)
    def calling(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except runtime.StreamingError as error:
            raise as_dbt_error(error) from None

    return calling  # type: ignore[return-value]
