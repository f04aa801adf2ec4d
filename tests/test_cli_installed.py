"""The installed ``course-fixture`` script: the entry point a user runs, in a process of its own.

The script is the one the package's ``[project.scripts]`` installed next to this Python
(``.venv/bin/course-fixture``). It runs against this checkout's code, and its output
for the README's ``validate`` and ``import`` examples is checked against the README's own
text, so the README quotes real output.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from course._cli import COMMANDS, EXIT_NOT_A_FIXTURE, EXIT_OK

from .helpers import ROUNDTRIP_PATH

ROOT = Path(__file__).resolve().parent.parent
RECORDINGS = Path(__file__).resolve().parent / "recordings"


def readme_console(first_command: str) -> str:
    """The README's ``console`` block that starts with ``$ first_command``, as it reads."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```console\n(.*?)```", readme, flags=re.DOTALL)
    found = [block for block in blocks if block.startswith(f"$ {first_command}")]
    assert len(found) == 1, f"the README has no console block starting with $ {first_command}"
    return str(found[0])


def installed_script() -> str:
    """``course-fixture`` as installed beside this interpreter (a venv's ``bin``)."""
    folders = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    script = shutil.which("course-fixture", path=os.pathsep.join(folders))
    assert script is not None, f"course-fixture is not installed in {folders}"
    return script


def run_script(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "100"}
    return subprocess.run(
        [installed_script(), *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# The README's example: a folder with the bundled round trip and a file with three
# problems (an unknown field, a trailing comma, a count out of range).
B_JSON = """\
{
  "schemaVersion": 1,
  "responses": [
    {"records": [
      {"type": "response_start", "responseId": "r-1", "role": "assistant"},
      {"type": "text_delta", "text": "Hello", "colour": "red"},
      {"type": "response_end", "responseId": "r-1", "stopReason": "stop",
       "usage": {"inputTokens": 3, "outputTokens": 1}}
    ]},
    {"records": [
      {"type": "response_start", "responseId": "r-2", "role": "assistant"},
      {"type": "text_delta", "text": "Hi"},
    ]},
    {"records": [
      {"type": "response_start", "responseId": "r-3", "role": "assistant"},
      {"type": "response_end", "responseId": "r-3", "stopReason": "stop",
       "usage": {"inputTokens": 3, "outputTokens": -1}}
    ]}
  ]
}
"""

README_VALIDATE = """\
my-fixtures/a.json:4:5:   response 0: ok (toolCall, 1 chunk)
my-fixtures/a.json:31:5:  response 1: ok (stop, 1 chunk)
my-fixtures/b.json:6:47:  response 0: PROVIDER_MALFORMED_EVENT A `text_delta` record has unknown field `colour` (allowed: `type`, `text`) (at /responses/0/records/1/colour)
my-fixtures/b.json:12:43: response 1: PROVIDER_INVALID_FIXTURE Expected another item after this comma (a trailing comma is not JSON) (at /responses/1/records)
my-fixtures/b.json:17:52: response 2: PROVIDER_MALFORMED_EVENT Expected `outputTokens` to be an integer from 0 to 2**53 - 1, got number `-1` (at /responses/2/records/1/usage/outputTokens)
2 files (1 not a fixture), 5 responses: 2 ok, 3 failed
"""  # noqa: E501


def test_the_installed_script_validates_the_readme_example_as_the_readme_shows(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "my-fixtures"
    folder.mkdir()
    shutil.copy(ROUNDTRIP_PATH, folder / "a.json")
    (folder / "b.json").write_text(B_JSON, encoding="utf-8")
    completed = run_script("validate", "my-fixtures/", cwd=tmp_path)
    assert completed.stderr == ""
    assert completed.stdout == README_VALIDATE
    assert completed.returncode == EXIT_NOT_A_FIXTURE
    assert readme_console("course-fixture validate my-fixtures/") == (
        "$ course-fixture validate my-fixtures/\n" + README_VALIDATE
    )


def test_the_installed_script_imports_the_readme_recordings_as_the_readme_shows(
    tmp_path: Path,
) -> None:
    for name, recording in {
        "chat.sse": "openai-chat/parallel_tool_calls.sse",
        "messages.sse": "anthropic/thinking_tool_use.sse",
        "responses.sse": "openai-responses/web_search.sse",
    }.items():
        shutil.copy(RECORDINGS / recording, tmp_path / name)
    command = "course-fixture import chat.sse messages.sse responses.sse -o fixture.json"
    imported = run_script(*command.split()[1:], cwd=tmp_path)
    assert imported.returncode == EXIT_OK
    assert imported.stdout == ""
    validated = run_script("validate", "fixture.json", cwd=tmp_path)
    assert validated.returncode == EXIT_OK
    assert validated.stderr == ""
    shown = readme_console(command)
    # The README's second command carries a comment after it; the output is verbatim.
    validate_line = next(
        line for line in shown.splitlines() if line.startswith("$ course-fixture validate")
    )
    assert validate_line.split("#")[0].rstrip() == "$ course-fixture validate fixture.json"
    assert shown == (f"$ {command}\n{imported.stderr}{validate_line}\n{validated.stdout}")


def test_the_installed_script_lists_every_command_and_replays_by_default(
    tmp_path: Path,
) -> None:
    helped = run_script("--help", cwd=tmp_path)
    assert helped.returncode == EXIT_OK
    for name, command in COMMANDS.items():
        assert name in helped.stdout
        assert command.HELP.split()[0] in helped.stdout
    replayed = run_script(cwd=tmp_path)
    assert replayed.returncode == EXIT_OK, replayed.stderr
    assert replayed.stdout.splitlines()[-1] == "2 calls: 2 ok"
