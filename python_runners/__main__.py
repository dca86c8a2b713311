"""Command line: `python -m python_runners demo | land [--records N] [--files K] | service ... | cluster ...`."""

from __future__ import annotations

import argparse
import sys

from python_runners import demo, local_cluster, service


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m python_runners")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="land data and run the pipeline twice, printing gold")
    land = commands.add_parser("land", help="land one new batch of device recordings and status reports")
    land.add_argument("--records", type=int, default=200)
    land.add_argument("--files", type=int, default=2)
    service.add_commands(commands)
    local_cluster.add_commands(commands)
    args = parser.parse_args()

    if args.command == "service":
        sys.exit(service.main(args))
    if args.command == "cluster":
        sys.exit(local_cluster.main(args))
    if args.command == "demo":
        demo.main()
    else:
        demo.land(records=args.records, files=args.files)


if __name__ == "__main__":
    main()
