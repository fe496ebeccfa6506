"""python3 -m testio_campaign campaign|compare ARGS: what `testio campaign` and `testio compare`
run (src/cli/python_command.cpp passes the binary's whole command line after "-m")."""
import sys

USAGE = "testio: usage: testio campaign ... or testio compare A B (docs/compare.md)"


def main(argv):
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "campaign":
        from .runner import main as campaign_main  # lazily: compare works without the runner
        return campaign_main(rest)
    if command == "compare":
        from .compare import main as compare_main
        return compare_main(rest)
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
