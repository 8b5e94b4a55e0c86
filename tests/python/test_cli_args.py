"""CLI argument handling and error reporting that need no simulation."""

from __future__ import annotations

import pytest

from reclaimlab import cli


def test_missing_scenario_file(cli, tmp_path):
    r = cli("run", "does-not-exist.toml", cwd=tmp_path)
    assert r.returncode == 2
    assert "error: does-not-exist.toml: no such file" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "results").exists()


def test_missing_scenario_file_show_defaults(cli, tmp_path):
    r = cli("run", "nope.toml", "--show-defaults", cwd=tmp_path)
    assert r.returncode == 2
    assert "error: nope.toml: no such file" in r.stderr


def test_unknown_option_is_argparse_error(cli, tmp_path):
    r = cli("run", "x.toml", "--frobnicate", cwd=tmp_path)
    assert r.returncode == 2
    assert "unrecognized arguments: --frobnicate" in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_subcommand(cli, tmp_path):
    r = cli("fly", cwd=tmp_path)
    assert r.returncode == 2
    assert "invalid choice" in r.stderr


def test_no_subcommand(cli, tmp_path):
    r = cli(cwd=tmp_path)
    assert r.returncode == 2


def test_help_lists_commands(cli, tmp_path):
    r = cli("--help", cwd=tmp_path)
    assert r.returncode == 0
    assert "run" in r.stdout and "examples" in r.stdout


@pytest.mark.parametrize("value", ["0", "-3", "sometimes", "1.5"])
def test_check_invariants_rejects(value, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "x.toml", "--check-invariants", value])
    assert e.value.code == 2
    assert "--check-invariants" in capsys.readouterr().err


@pytest.mark.parametrize("value,expected", [("off", "off"), ("every", "every"), ("1000", 1000)])
def test_check_invariants_accepts(value, expected):
    args = cli.build_parser().parse_args(["run", "x.toml", "--check-invariants", value])
    assert args.check_invariants == expected


@pytest.mark.parametrize("value", ["-1", "abc", str(2**64)])
def test_seed_rejects(value, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "x.toml", "--seed", value])
    assert e.value.code == 2


def test_run_defaults():
    args = cli.build_parser().parse_args(["run", "s.toml"])
    assert args.seed is None and args.out is None and args.check_invariants == "off"
    assert args.show_defaults is False


def test_examples_defaults():
    args = cli.build_parser().parse_args(["examples"])
    assert args.out == "results"


def test_examples_missing_scenarios_dir(cli, tmp_path):
    r = cli("examples", "--scenarios", "nowhere", cwd=tmp_path)
    assert r.returncode == 2
    assert "error: nowhere: no such directory" in r.stderr
