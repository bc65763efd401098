"""The CI output formats (sarif, github, junit, json-lines, gitlab, rdjson, azure, pylint,
grouped) through the real CLI.

SARIF documents are validated against the official SARIF 2.1.0 schema (with format
checking), JUnit documents against two published JUnit XML schemas, rdjson against
reviewdog's schema and GitLab reports against the fields GitLab documents; see
tests/data/README.md.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from importlib.util import find_spec
from pathlib import Path

import jsonschema
import pytest
import xmlschema

from conftest import FIXTURES, Project, run_torchlint, run_with_crashing_rule

DATA = Path(__file__).parent / "data"
SARIF_SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
SARIF_VALIDATOR = jsonschema.Draft7Validator(SARIF_SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
JUNIT_SCHEMAS = [xmlschema.XMLSchema(str(DATA / name)) for name in ("JUnit.xsd", "junit-10.xsd")]

ALIAS = """\
import torch

a = torch.tensor(1.0, requires_grad=True)
b = a * 2
b_detach = b.detach()
label = "😀"; print(a.data.cpu().numpy())
b_detach.zero_()
print(b)
y = a.data
y[0] = 1
"""
CLEAN = "import torch\n\nx = torch.ones(2)\n"


def sarif(project: Project, *args: str, cwd: Path | None = None) -> dict:
    result = project.run("check", "--isolated", "--output-format", "sarif", *args, cwd=cwd or project.root)
    assert result.returncode in (0, 1), result.stderr
    document = json.loads(result.stdout)  # the whole of standard output: no summary line after it
    errors = sorted(SARIF_VALIDATOR.iter_errors(document), key=lambda error: list(error.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    return document


def junit(project: Project, *args: str) -> ET.Element:
    result = project.run("check", "--isolated", "--output-format", "junit", *args)
    assert result.returncode in (0, 1), result.stderr
    for schema in JUNIT_SCHEMAS:
        schema.validate(result.stdout)
    return ET.fromstring(result.stdout)


def json_findings(project: Project, *args: str, cwd: Path | None = None) -> list[dict]:
    result = project.run("check", "--isolated", "--output-format", "json", *args, cwd=cwd or project.root)
    assert result.returncode in (0, 1), result.stderr
    return result.json()


def git_init(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def outside_any_git_repository(folder: Path) -> bool:
    return not any((parent / ".git").exists() for parent in (folder, *folder.parents))


# -- the option ------------------------------------------------------------------------------

def test_help_lists_every_format() -> None:
    result = run_torchlint("check", "--help")
    for name in ("full", "concise", "json", "json-lines", "sarif", "github", "junit", "grouped", "gitlab", "rdjson",
                 "azure", "pylint"):
        assert name in result.stdout
    assert "GITHUB_ACTIONS" in result.stdout


def test_github_actions_picks_the_github_format(project) -> None:
    project.write("train.py", ALIAS)
    inside = project.run("check", "--isolated", env={"GITHUB_ACTIONS": "true"})
    assert inside.returncode == 1
    assert inside.stdout.startswith("::error file=train.py,line=6,col=20,")
    assert "Found 4 findings in 1 file." in inside.stdout  # a plain log line after the annotations
    explicit = project.run("check", "--isolated", "--output-format", "concise", env={"GITHUB_ACTIONS": "true"})
    assert explicit.stdout.startswith("train.py:6:20: TL101")
    elsewhere = project.run("check", "--isolated", env={"GITHUB_ACTIONS": "false"})
    assert "::error" not in elsewhere.stdout and " | " in elsewhere.stdout  # full
    counts = project.run("check", "--isolated", "--statistics", env={"GITHUB_ACTIONS": "true"})
    assert counts.returncode == 1 and "\tTL101\t" in counts.stdout and "::error" not in counts.stdout


@pytest.mark.parametrize("output_format", ["sarif", "github", "junit"])
def test_statistics_refuses_formats_that_cannot_show_counts(project, output_format) -> None:
    project.write("train.py", ALIAS)
    result = project.run("check", "--isolated", "--statistics", "--output-format", output_format)
    assert result.returncode == 2
    assert f"--statistics prints counts per rule, which --output-format {output_format} cannot show" in result.stderr
    assert result.stdout == ""


def test_statistics_as_json_lines(project) -> None:
    project.write("train.py", ALIAS)
    result = project.run("check", "--isolated", "--statistics", "--output-format", "json-lines")
    assert result.returncode == 1
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    as_json = project.run("check", "--isolated", "--statistics", "--output-format", "json").json()
    assert rows == as_json
    assert {"code": "TL101", "name": "data-read", "count": 2, "fixable": True} in rows


# -- json-lines ------------------------------------------------------------------------------

def test_json_lines_is_the_json_list_one_object_a_line(project) -> None:
    project.write("train.py", ALIAS)
    project.write("pkg/broken.py", "def f(:\n")
    project.write("pkg/clean.py", CLEAN)
    result = project.run("check", "--isolated", "--output-format", "json-lines")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 5 and all(line.startswith("{") for line in lines)
    assert [json.loads(line) for line in lines] == json_findings(project)


def test_json_lines_prints_nothing_when_clean(project) -> None:
    project.write("clean.py", CLEAN)
    result = project.run("check", "--isolated", "--output-format", "json-lines")
    assert (result.returncode, result.stdout) == (0, "")


# -- SARIF -----------------------------------------------------------------------------------

def test_sarif_in_a_git_repository_names_files_from_the_repository_root(tmp_path) -> None:
    repo = git_init(tmp_path / "repo")
    project = Project(repo)
    project.write("pkg/sub/train.py", ALIAS)
    project.write("pkg/sub/broken.py", "def f(:\n")
    document = sarif(project, cwd=repo / "pkg")
    run = document["runs"][0]
    assert document["version"] == "2.1.0" and len(document["runs"]) == 1
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    uris = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for result in run["results"]}
    assert uris == {"pkg/sub/train.py", "pkg/sub/broken.py"}
    for result in run["results"]:
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"


def test_sarif_outside_git_names_files_from_the_working_directory(project) -> None:
    assert outside_any_git_repository(project.root)
    project.write("pkg/train.py", ALIAS)
    project.write("other/extra.py", ALIAS)
    document = sarif(project, "train.py", "../other/extra.py", cwd=project.root / "pkg")
    run = document["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"] == {
        "uri": (project.root / "pkg").as_uri() + "/", "description": {"text": "The working directory"}}
    locations = {json.dumps(r["locations"][0]["physicalLocation"]["artifactLocation"]) for r in run["results"]}
    assert locations == {
        json.dumps({"uri": "train.py", "uriBaseId": "%SRCROOT%"}),
        json.dumps({"uri": (project.root / "other" / "extra.py").as_uri()}),  # outside the root: absolute
    }


def test_sarif_uris_are_percent_encoded(project) -> None:
    project.write("odd, name: v1 #2.py", ALIAS)
    run = sarif(project)["runs"][0]
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "odd%2C%20name%3A%20v1%20%232.py"


def test_sarif_rules_results_and_locations(project) -> None:
    project.write("train.py", ALIAS)
    run = sarif(project)["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("torchlint", run_torchlint("--version").stdout.split()[-1])
    assert driver["informationUri"].startswith("https://")
    found = json_findings(project)
    assert [rule["id"] for rule in driver["rules"]] == ["TL101", "TL102", "TL301"]  # codes that appear
    rule_docs = {rule["id"]: rule for rule in driver["rules"]}
    for rule in driver["rules"]:
        documentation = run_torchlint("rule", rule["id"]).stdout
        assert rule["help"]["markdown"].strip() == documentation.strip() == rule["help"]["text"].strip()
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert not rule["fullDescription"]["text"].startswith("#")
        assert rule["defaultConfiguration"]["level"] == "error"
    assert len(run["results"]) == len(found) == 4
    assert run["columnKind"] == "utf16CodeUnits"
    for result, item in zip(run["results"], found):
        assert result["ruleId"] == item["code"]
        assert driver["rules"][result["ruleIndex"]]["id"] == item["code"]
        assert rule_docs[item["code"]]["helpUri"] == item["url"]
        assert result["message"]["text"] == item["message"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert (region["startLine"], region["endLine"]) == (item["location"]["row"], item["end_location"]["row"])
    # Line 6 has an emoji (two UTF-16 code units) before `a.data`: SARIF columns count code units.
    first, first_json = run["results"][0], found[0]
    assert first_json["location"] == {"row": 6, "column": 20}
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (region["startColumn"], region["endColumn"]) == (21, 27)
    assert ALIAS.splitlines()[5].encode("utf-16-le")[2 * 20:2 * 26].decode("utf-16-le") == "a.data"


def test_sarif_related_locations(project) -> None:
    project.write("train.py", ALIAS)
    run = sarif(project)["runs"][0]
    (tl102,) = [result for result in run["results"] if result["ruleId"] == "TL102"]
    related = {(note["message"]["text"], note["physicalLocation"]["region"]["startLine"])
               for note in tl102["relatedLocations"]}
    assert ("`y` = `a.data` here", 9) in related
    assert [note["id"] for note in tl102["relatedLocations"]] == list(range(len(tl102["relatedLocations"])))


def _apply(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements (1-based lines, UTF-16 columns) to ``text``."""
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]

    def offset(line: int, column: int) -> int:
        start = starts[line - 1]
        units = 0
        index = start
        while units < column - 1:
            units += 2 if ord(text[index]) > 0xFFFF else 1
            index += 1
        return index

    edits = sorted(((offset(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                     offset(r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
                     r["insertedContent"]["text"]) for r in replacements), reverse=True)
    for start, end, content in edits:
        text = text[:start] + content + text[end:]
    return text


def test_sarif_fixes_give_what_fix_writes(project) -> None:
    project.write("train.py", ALIAS)
    run = sarif(project)["runs"][0]
    replacements = []
    for result in run["results"]:
        for fix in result.get("fixes", []):
            assert fix["description"]["text"]
            if fix["properties"]["applicability"] in ("safe", "unsafe"):
                (change,) = fix["artifactChanges"]
                assert change["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
                replacements += change["replacements"]
    insertions = [r for r in replacements if r["deletedRegion"]["startColumn"] == r["deletedRegion"]["endColumn"]]
    assert [r["insertedContent"]["text"] for r in insertions] == [".clone()"]
    applied = _apply(ALIAS, replacements)
    assert project.run("check", "--isolated", "--fix", "--unsafe-fixes", "train.py").returncode in (0, 1)
    assert applied == (project.root / "train.py").read_text(encoding="utf-8")
    assert "print(a.detach().cpu().numpy())" in applied and "b.detach().clone()" in applied


def test_sarif_fingerprints_survive_line_shifts(project) -> None:
    body = ALIAS + "z = a.data\nz = a.data\n"  # two identical lines: told apart by their occurrence
    project.write("train.py", body)

    def fingerprints() -> list[tuple[str, str, int]]:
        results = sarif(project)["runs"][0]["results"]
        return [(r["ruleId"], r["partialFingerprints"]["torchlintFingerprint/v1"],
                 r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results]

    before = fingerprints()
    assert len({fingerprint for _, fingerprint, _ in before}) == len(before) == 6
    project.write("train.py", "# a new header comment\n\n\n" + body.replace("print(b)", "print(b)   "))
    after = fingerprints()
    assert [fingerprint for _, fingerprint, _ in after] == [fingerprint for _, fingerprint, _ in before]
    assert [line for _, _, line in after] == [line + 3 for _, _, line in before]
    project.write("train.py", body.replace("y = a.data", "y = a.data  # now different"))
    changed = {fingerprint for _, fingerprint, _ in fingerprints()}
    assert len(changed - {fingerprint for _, fingerprint, _ in before}) == 1


def test_sarif_unlintable_file_is_an_error_result(project) -> None:
    project.write("broken.py", "def f(:\n")
    project.write("clean.py", CLEAN)
    run = sarif(project)["runs"][0]
    (result,) = run["results"]
    assert (result["ruleId"], result["level"]) == ("TL000", "error")
    assert "broken.py was not linted: syntax error" in result["message"]["text"]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["TL000"]
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def test_sarif_reports_an_internal_error_as_a_tool_notification(project) -> None:
    """A crashing rule: TL000 on that file as a result, the crash as a failed invocation."""
    project.write("a.py", ALIAS)
    project.write("b.py", "import torch\nprint(torch.ones(1, requires_grad=True).data)\n")
    completed = run_with_crashing_rule(project.root, "--isolated", "--output-format", "sarif")
    assert completed.returncode == 2
    document = json.loads(completed.stdout)
    assert not list(SARIF_VALIDATOR.iter_errors(document))
    run = document["runs"][0]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error"
    assert "internal error in rule TL999 while linting a.py: ValueError: boom" in notification["message"]["text"]
    assert sorted(result["ruleId"] for result in run["results"]) == ["TL000", "TL101"]


def test_sarif_without_findings(project) -> None:
    project.write("clean.py", CLEAN)
    result = project.run("check", "--isolated", "--output-format", "sarif")
    assert result.returncode == 0
    run = json.loads(result.stdout)["runs"][0]
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []
    assert not list(SARIF_VALIDATOR.iter_errors(json.loads(result.stdout)))


def test_sarif_from_standard_input(project) -> None:
    result = project.run("check", "--isolated", "--output-format", "sarif", "-", stdin=ALIAS.encode())
    document = json.loads(result.stdout)
    assert not list(SARIF_VALIDATOR.iter_errors(document))
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in document["runs"][0]["results"]} == {"-"}


def test_the_validator_checks_formats() -> None:
    """The schema check is real: a document with a malformed URI is rejected."""
    broken = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x", "informationUri": "not a uri"}}}]}
    assert any(error.validator == "format" for error in SARIF_VALIDATOR.iter_errors(broken))


@pytest.mark.skipif(find_spec("torch") is None, reason="the runtime check needs torch")
def test_sarif_carries_the_runtime_verdict(tmp_path) -> None:
    project = Project(tmp_path)
    shutil.copy(FIXTURES / "TL102-data-inplace" / "bad_silent_wrong_gradient.py", tmp_path / "bug.py")
    document = sarif(project, "--runtime", "bug.py")
    (result,) = document["runs"][0]["results"]
    assert result["properties"]["runtime"]["verdict"] == "CONFIRMED"
    assert result["properties"]["runtime"]["evidence"]


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
         "source": ["import torch\n", "x = torch.rand(3, requires_grad=True)"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [], "source": ["y = x.data"]},
    ],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}


def test_notebook_findings_name_the_cell(project) -> None:
    """Rows in a cell are not rows of the .ipynb file: the formats that point into files name
    the cell in words and leave out the line numbers."""
    project.write("nb.ipynb", json.dumps(NOTEBOOK, indent=1))
    (result,) = sarif(project)["runs"][0]["results"]
    notebook = {"uri": "nb.ipynb", "uriBaseId": "%SRCROOT%"}
    assert result["locations"] == [{"physicalLocation": {"artifactLocation": notebook}}]
    assert result["message"]["text"].startswith("cell 3:1:5: `x.data` is an alias")
    assert result["properties"] == {"cell": 3}
    assert "fixes" not in result and "relatedLocations" not in result

    github = project.run("check", "--isolated", "--output-format", "github")
    command, properties, message = parse_workflow_command(github.stdout.splitlines()[0])
    assert properties == {"file": "nb.ipynb", "title": "TL101 data-read"}
    assert message.startswith("cell 3:1:5: `x.data` is an alias")

    (case,) = junit(project).findall("testsuite/testcase")
    assert case.get("name") == "TL101 data-read (cell 3:1:5)"
    assert case.find("failure").text.startswith("nb.ipynb:cell 3:1:5: TL101 ")


# -- GitHub workflow commands ------------------------------------------------------------------

def _unescape(text: str) -> str:
    return (text.replace("%3A", ":").replace("%2C", ",").replace("%0D", "\r").replace("%0A", "\n")
            .replace("%25", "%"))


def parse_workflow_command(line: str) -> tuple[str, dict[str, str], str]:
    """Read ``::name key=value,...::message`` the way the Actions runner does."""
    match = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert match, line
    properties = dict(item.split("=", 1) for item in match.group(2).split(","))
    return match.group(1), {key: _unescape(value) for key, value in properties.items()}, _unescape(match.group(3))


def test_github_annotations_are_escaped(project) -> None:
    odd = "odd, name: v1 100%.py"
    project.write(odd, "import torch\nx = torch.rand(3, requires_grad=True)\ny = (x % 2).data\n")
    project.write("cr\rlf\nname.py", ALIAS)
    result = project.run("check", "--isolated", "--output-format", "github")
    assert result.returncode == 1
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert "file=odd%2C name%3A v1 100%25.py,line=3,col=5,endLine=3,endColumn=17,title=TL101 data-read::" \
           "`(x %25 2).data` is an alias" in result.stdout
    found = json_findings(project)
    assert len(annotations) == len(found) == 5
    by_place = {(Path(item["filename"]).name, item["location"]["row"], item["location"]["column"]): item
                for item in found}
    for line in annotations:
        command, properties, message = parse_workflow_command(line)
        assert command == "error"
        item = by_place[(properties["file"], int(properties["line"]), int(properties["col"]))]
        assert (int(properties["endLine"]), int(properties["endColumn"])) == (
            item["end_location"]["row"], item["end_location"]["column"])
        assert properties["title"] == f"{item['code']} {item['name']}"
        assert message == f"{item['message']}\n{item['url']}"
    assert {parse_workflow_command(line)[1]["file"] for line in annotations} == {odd, "cr\rlf\nname.py"}


def test_github_paths_are_relative_to_the_repository(tmp_path) -> None:
    repo = git_init(tmp_path / "repo")
    Project(repo).write("src/models/train.py", ALIAS)
    result = run_torchlint("check", "--isolated", "--output-format", "github", "train.py", cwd=repo / "src" / "models")
    assert result.stdout.startswith("::error file=src/models/train.py,line=6,col=20,endLine=6,endColumn=26,")


# -- JUnit -----------------------------------------------------------------------------------

def test_junit_one_suite_per_file(project) -> None:
    project.write("train.py", ALIAS)
    project.write("pkg/broken.py", "def f(:\n")
    project.write("pkg/clean.py", CLEAN)
    root = junit(project)
    assert root.tag == "testsuites"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert set(suites) == {"train.py", "pkg/broken.py", "pkg/clean.py"}

    train = suites["train.py"]
    assert (train.get("tests"), train.get("failures"), train.get("errors")) == ("4", "4", "0")
    failures = [case.find("failure") for case in train.findall("testcase")]
    assert [failure.get("type") for failure in failures] == ["TL101", "TL301", "TL101", "TL102"]
    found = json_findings(project, "train.py")
    assert [failure.get("message") for failure in failures] == [item["message"] for item in found]
    assert train.findall("testcase")[0].get("name") == "TL101 data-read (6:20)"
    assert failures[0].text.startswith("train.py:6:20: TL101 ")
    assert found[0]["url"] in failures[0].text

    broken = suites["pkg/broken.py"]
    assert (broken.get("tests"), broken.get("failures"), broken.get("errors")) == ("1", "0", "1")
    assert broken.find("testcase/error").get("type") == "TL000"

    clean = suites["pkg/clean.py"]
    assert (clean.get("tests"), clean.get("failures"), clean.get("errors")) == ("1", "0", "0")
    (case,) = clean.findall("testcase")
    assert list(case) == []  # a passing testcase


def test_junit_escapes_markup_and_control_characters(project) -> None:
    name = 'amp & <lt> "q" \x07.py'
    project.write(name, "import torch\nx = torch.rand(3, requires_grad=True)\ny = (x < 2).data & x.data\n")
    root = junit(project)
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == 'amp & <lt> "q" \\x07.py'  # XML 1.0 cannot carry \x07 at all
    messages = [case.find("failure").get("message") for case in suite.findall("testcase")]
    assert messages == [item["message"] for item in json_findings(project)]
    assert any("<" in message for message in messages)


def test_junit_without_files(project) -> None:
    project.write("notes.txt", "nothing to lint")
    root = junit(project)
    assert root.tag == "testsuites" and list(root) == []


# -- gitlab, rdjson, azure, pylint, grouped ----------------------------------------------------

RDJSON_VALIDATOR = jsonschema.Draft4Validator(json.loads((DATA / "rdjson-DiagnosticResult.json").read_text("utf-8")))
GITLAB_VALIDATOR = jsonschema.Draft7Validator(json.loads((DATA / "gitlab-code-quality.schema.json").read_text("utf-8")))


def document(project: Project, output_format: str, validator, *args: str, cwd: Path | None = None):
    result = project.run("check", "--isolated", "--output-format", output_format, *args, cwd=cwd or project.root)
    assert result.returncode in (0, 1), result.stderr
    found = json.loads(result.stdout)  # the whole of standard output
    errors = list(validator.iter_errors(found))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    return found


def test_gitlab_code_quality_report(project) -> None:
    project.write("src/train.py", ALIAS)
    issues = document(project, "gitlab", GITLAB_VALIDATOR)
    expected = [(item["code"], item["location"]["row"], item["end_location"]["row"]) for item in json_findings(project)]
    assert [(issue["check_name"], issue["location"]["lines"]["begin"], issue["location"]["lines"]["end"])
            for issue in issues] == expected
    assert {issue["location"]["path"] for issue in issues} == {"src/train.py"}
    assert len({issue["fingerprint"] for issue in issues}) == len(issues) == 4
    assert all(issue["description"].startswith(issue["check_name"] + " ") for issue in issues)
    # Inside GitLab CI the paths are relative to the project directory, wherever torchlint runs.
    ci = project.run("check", "--isolated", "--output-format", "gitlab", "train.py", cwd=project.root / "src",
                     env={"CI_PROJECT_DIR": str(project.root)})
    assert {issue["location"]["path"] for issue in json.loads(ci.stdout)} == {"src/train.py"}
    assert document(project, "gitlab", GITLAB_VALIDATOR, "--select", "TL205") == []


def test_gitlab_fingerprints_survive_line_shifts(project) -> None:
    project.write("train.py", ALIAS)
    before = [issue["fingerprint"] for issue in document(project, "gitlab", GITLAB_VALIDATOR)]
    project.write("train.py", "# a header\n\n" + ALIAS)
    assert [issue["fingerprint"] for issue in document(project, "gitlab", GITLAB_VALIDATOR)] == before


def test_rdjson_has_utf8_columns_and_fixes_as_suggestions(project) -> None:
    project.write("train.py", ALIAS)
    found = document(project, "rdjson", RDJSON_VALIDATOR)
    assert found["source"]["name"] == "torchlint"
    by_line = {d["location"]["range"]["start"]["line"]: d for d in found["diagnostics"]}
    # line 6 is `label = "😀"; print(a.data.cpu().numpy())`: the emoji is 4 bytes, 1 character
    data_read = by_line[6]
    assert data_read["code"]["value"] == "TL101" and data_read["code"]["url"].endswith("TL101-data-read.md")
    assert data_read["location"]["range"]["start"]["column"] == 20 + 3
    (suggestion,) = data_read["suggestions"]
    line = ALIAS.splitlines()[5].encode("utf-8")
    start, end = suggestion["range"]["start"]["column"], suggestion["range"]["end"]["column"]
    fixed = (line[:start - 1] + suggestion["text"].encode("utf-8") + line[end - 1:]).decode("utf-8")
    assert fixed == 'label = "😀"; print(a.detach().cpu().numpy())'
    assert document(project, "rdjson", RDJSON_VALIDATOR, "--select", "TL205")["diagnostics"] == []


def test_rdjson_schema_check_is_real() -> None:
    assert list(RDJSON_VALIDATOR.iter_errors({"diagnostics": [{"severity": "LOUD"}]}))
    assert list(GITLAB_VALIDATOR.iter_errors([{"description": "x", "check_name": "TL101", "fingerprint": "f",
                                              "severity": "major", "location": {"path": "/abs.py",
                                                                                "lines": {"begin": 1}}}]))


def test_azure_logging_commands(project) -> None:
    project.write("train.py", ALIAS)
    result = project.run("check", "--isolated", "--output-format", "azure")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == len(json_findings(project)) and all(line.startswith("##vso[task.logissue ") for line in lines)
    assert lines[0] == ("##vso[task.logissue type=error;sourcepath=train.py;linenumber=6;columnnumber=20;code=TL101;]"
                        "`a.data` is an alias autograd does not track; use `a.detach()`")
    assert "%0A" not in lines[0] and "Found" not in result.stdout  # no summary after the commands


def test_pylint_lines(project) -> None:
    project.write("train.py", ALIAS)
    result = project.run("check", "--isolated", "--output-format", "pylint")
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("train.py:6: [TL101] `a.data`")
    assert all(re.fullmatch(r"train\.py:\d+: \[TL\d{3}\] .+", line) for line in result.stdout.splitlines())


def test_grouped_lists_findings_under_their_file(project) -> None:
    project.write("a.py", ALIAS)
    project.write("b.py", CLEAN)
    project.write("c.py", "import torch\nx = torch.ones(1)\ny = x.data\n")
    result = project.run("check", "--isolated", "--output-format", "grouped")
    assert result.returncode == 1
    text = result.stdout
    assert text.startswith("a.py:\n  6:20 TL101 ") and "\nc.py:\n  3:5 TL101 " in text and "b.py" not in text
    assert "Found " in text  # a human format: the summary follows
