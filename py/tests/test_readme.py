"""The README's Python example, run exactly as written (from a scratch directory that sees this
checkout's `tests/`)."""

import os
import re


def test_readme_python_example(root, tmp_path, capsys):
    text = (root / "README.md").read_text()
    section = text[text.index("## Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    (tmp_path / "tests").symlink_to(root / "tests")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code, "README.md (Python)", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert out.startswith("[8, 4]\n"), out
    assert (tmp_path / "mlp_py_hw" / "top.sv").exists()
