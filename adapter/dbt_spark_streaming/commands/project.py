"""The dbt project, profile target and lakehouse a command works on, found as dbt finds them
but without importing dbt or starting Spark, so that `status` and `stop` answer at once.

dbt's options and their defaults: --project-dir (else DBT_PROJECT_DIR, else the nearest folder
from here up with a dbt_project.yml), --profiles-dir (else DBT_PROFILES_DIR, else this folder
when it has a profiles.yml, else ~/.dbt), --target (else DBT_TARGET, else the profile's
`target:`), --vars. Of the target only `lakehouse_dir`, `schema` and what its session starts
with (`master`, `metastore_url`, `server_side_parameters`) are read, rendered with env_var() and
var(): what a profile uses to point them somewhere. The lakehouse is then the
one `dbt run` uses (connections.py use_lakehouse_of): lakehouse_dir, relative to the project's
folder; else LAKEHOUSE_DIR; else .lakehouse in the project's folder.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from dbt_spark_streaming.lakehouse import Lakehouse, use_root, use_target


class ProfileError(Exception):
    """The project or its profile target cannot be found; the message says what to give."""


@dataclass(frozen=True)
class DbtOptions:
    project_dir: Optional[str] = None
    profiles_dir: Optional[str] = None
    target: Optional[str] = None
    vars: Optional[str] = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "DbtOptions":
        return cls(args.project_dir, args.profiles_dir, args.target, args.vars)

    def as_dbt_args(self) -> list[str]:
        """The options given, as dbt's command line takes them (--vars apart: a command may add to them)."""
        given = [("--project-dir", self.project_dir), ("--profiles-dir", self.profiles_dir),
                 ("--target", self.target)]
        return [part for option, value in given if value for part in (option, str(value))]


@dataclass(frozen=True)
class ProfileTarget:
    profile: str
    name: str
    lakehouse_dir: Optional[str]
    schema: str
    # What a session of this target starts with (the warm driver starts its JVM so)
    master: Optional[str] = None
    metastore_url: Optional[str] = None
    server_side_parameters: Mapping[str, str] = field(default_factory=dict)


def add_dbt_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project-dir", help="the dbt project (dbt's default: this folder or the nearest above with a dbt_project.yml)")
    parser.add_argument("--profiles-dir", help="the folder of profiles.yml (dbt's default)")
    parser.add_argument("--target", "-t", help="the profile's target")
    parser.add_argument("--vars", help="dbt --vars, as for dbt run")


def project_dir(options: DbtOptions, environ: Mapping[str, str] = os.environ, cwd: Optional[Path] = None) -> Path:
    given = options.project_dir or environ.get("DBT_PROJECT_DIR")
    if given:
        return Path(given).expanduser().resolve()
    here = (cwd or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if (folder / "dbt_project.yml").is_file()), here)


def profiles_dir(options: DbtOptions, environ: Mapping[str, str] = os.environ, cwd: Optional[Path] = None,
                 home: Optional[Path] = None) -> Path:
    given = options.profiles_dir or environ.get("DBT_PROFILES_DIR")
    if given:
        return Path(given).expanduser().resolve()
    here = (cwd or Path.cwd()).resolve()
    return here if (here / "profiles.yml").is_file() else (home or Path.home()) / ".dbt"


def profile_target(options: DbtOptions, environ: Mapping[str, str] = os.environ, cwd: Optional[Path] = None,
                   home: Optional[Path] = None) -> ProfileTarget:
    """The profile target a `dbt run` with these options uses; ProfileError when there is none."""
    import yaml

    project = project_dir(options, environ, cwd) / "dbt_project.yml"
    if not project.is_file():
        raise ProfileError(f"{project.parent} has no dbt_project.yml: run this in a dbt project's folder "
                           "or give it with --project-dir.")
    render = _renderer(options, environ)
    profile = render((yaml.safe_load(project.read_text()) or {}).get("profile"))
    if not profile:
        raise ProfileError(f"{project} names no profile: add `profile: <name>`, the profile in profiles.yml.")
    profiles_yml = profiles_dir(options, environ, cwd, home) / "profiles.yml"
    if not profiles_yml.is_file():
        raise ProfileError(f"No profiles.yml in {profiles_yml.parent}: give its folder with --profiles-dir "
                           "or DBT_PROFILES_DIR.")
    profiles = yaml.safe_load(profiles_yml.read_text()) or {}
    if profile not in profiles:
        raise ProfileError(f"{profiles_yml} has no profile {profile!r} (dbt_project.yml's `profile:`).")
    outputs = profiles[profile].get("outputs") or {}
    name = options.target or environ.get("DBT_TARGET") or render(profiles[profile].get("target")) or "default"
    if name not in outputs:
        raise ProfileError(f"The profile {profile!r} in {profiles_yml} has no target {name!r}; its targets: "
                           f"{', '.join(outputs) or 'none'}.")
    output = outputs[name]
    lakehouse_dir = render(output.get("lakehouse_dir"))
    master, metastore_url = render(output.get("master")), render(output.get("metastore_url"))
    return ProfileTarget(profile, name, str(lakehouse_dir) if lakehouse_dir else None,
                         str(render(output.get("schema") or "default")),
                         str(master) if master else None, str(metastore_url) if metastore_url else None,
                         {str(key): str(render(value))
                          for key, value in (output.get("server_side_parameters") or {}).items()})


def lakehouse(options: DbtOptions, environ: Mapping[str, str] = os.environ, cwd: Optional[Path] = None,
              home: Optional[Path] = None, target: Optional[ProfileTarget] = None) -> Lakehouse:
    """The lakehouse `dbt run` with these options writes to (its parts moved by LAKEHOUSE_* as
    there); `target`: their profile target, when the caller has read it already."""
    target = target or profile_target(options, environ, cwd, home)
    resolved = dict(environ)
    use_root(target.lakehouse_dir, project_dir(options, environ, cwd), resolved)
    use_target(target.schema, resolved)
    return Lakehouse.from_env(resolved)


def found_or_said(options: DbtOptions) -> Optional[tuple[ProfileTarget, Lakehouse]]:
    """The profile target and its lakehouse; None once the reason there are none is on stderr
    (the command then exits 2)."""
    try:
        target = profile_target(options)
        return target, lakehouse(options, target=target)
    except ProfileError as error:
        print(error, file=sys.stderr)
        return None


def parse_vars(text: Optional[str]) -> dict[str, Any]:
    """dbt's --vars: a YAML mapping."""
    import yaml

    if not text:
        return {}
    parsed = yaml.safe_load(text)
    if not isinstance(parsed, dict):
        raise ProfileError(f"--vars {text!r} is not a mapping: give them as dbt does, e.g. \"{{key: value}}\".")
    return parsed


def _renderer(options: DbtOptions, environ: Mapping[str, str]):
    """A string value rendered as dbt renders a profile's (env_var, var); others as they are."""
    import jinja2

    missing = object()

    def lookup(function: str, values: Mapping[str, Any], otherwise: str):
        def look(name: str, default: Any = missing) -> Any:
            if name in values:
                return values[name]
            if default is missing:
                raise ProfileError(f"The profile uses {function}('{name}'), {otherwise.format(name=name)}")
            return default
        return look

    env_var = lookup("env_var", environ, "which is not set and has no default: set {name}.")
    var = lookup("var", parse_vars(options.vars), "which --vars does not give.")

    templates = jinja2.Environment(undefined=jinja2.StrictUndefined)
    templates.globals.update(env_var=env_var, var=var)

    def render(value: Any) -> Any:
        if not isinstance(value, str) or "{" not in value:
            return value
        try:
            return templates.from_string(value).render()
        except jinja2.TemplateError as error:
            raise ProfileError(f"Could not read {value!r} in the profile without dbt: {error}.") from None

    return render
