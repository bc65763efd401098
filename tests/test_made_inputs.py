"""Which script of a project writes a file a run found missing (runtime/made_inputs.py), read
with ``ast`` from real script text; and what a making job may hand back."""

from __future__ import annotations

import ast
import base64
import textwrap
from pathlib import Path

import pytest

from torchlint.runtime import made_inputs

ROOT = "/project"


def writes(source: str, missing: str) -> bool:
    tree = ast.parse(textwrap.dedent(source))
    return any(pattern.search(missing) for pattern, _folder in made_inputs.written_paths(tree))


@pytest.mark.parametrize(("source", "missing"), [
    ("np.save('loc_train' + suffix + '.npy', loc)", "/project/data/loc_train_springs5.npy"),
    ("numpy.savez(f'features_{split}.npz', x=x)", "/project/features_train.npz"),
    ("torch.save(model.state_dict(), os.path.join(folder, 'encoder.pt'))", "/project/logs/exp1/encoder.pt"),
    ("pickle.dump(vocab, open('vocab_%s.pkl' % lang, 'wb'))", "/project/vocab_en.pkl"),
    ("with open('{}/tokens.txt'.format(out), 'w') as f:\n    f.write(text)", "/project/corpus/tokens.txt"),
    ("json.dump(config, open(name + '_config.json', mode='w'))", "/project/run/generator_config.json"),
])
def test_a_script_that_writes_the_file_is_found(source, missing) -> None:
    assert writes(source, missing)


@pytest.mark.parametrize(("source", "missing"), [
    ("np.save('loc_valid' + suffix + '.npy', loc)", "/project/data/loc_train_springs5.npy"),
    ("np.save(name + '.npy', loc)", "/project/data/loc_train_springs5.npy"),  # only an extension: says nothing
    ("np.save(path, loc)", "/project/data/loc_train.npy"),
    ("data = open('loc_train.npy').read()", "/project/loc_train.npy"),  # a read, not a write
    ("torch.load('encoder.pt')", "/project/encoder.pt"),
])
def test_a_script_that_does_not_write_it_is_not(source, missing) -> None:
    assert not writes(source, missing)


def test_a_path_without_a_folder_is_made_beside_the_missing_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "generate.py").write_text("np.save('loc_train' + suffix + '.npy', loc)\n")
    (tmp_path / "export.py").write_text("np.save(os.path.join('out', 'loc_train' + s + '.npy'), loc)\n")
    (tmp_path / "test_generate.py").write_text("np.save('loc_train' + s + '.npy', loc)\n")  # a test makes nothing
    scripts = [str(data / "generate.py"), str(tmp_path / "export.py"), str(tmp_path / "test_generate.py")]
    missing = str(tmp_path / "data" / "loc_train_springs5.npy")

    def read(path: str):
        return ast.parse(Path(path).read_text())

    assert made_inputs.writers(missing, scripts, read) == [(str(data / "generate.py"), str(data))]
    out = str(tmp_path / "out" / "loc_train_x.npy")
    assert made_inputs.writers(out, scripts, read) == [(str(tmp_path / "export.py"), str(tmp_path))]


def test_what_a_making_job_hands_back_is_checked() -> None:
    good = base64.b64encode(b"\x93NUMPY").decode()
    written = {"/project/data/a.npy": good, "relative.npy": good, "/project/b.npy": "not base64!",
               "/project/c.npy": 3, 7: good}
    assert made_inputs.decoded(written) == {"/project/data/a.npy": b"\x93NUMPY"}
    assert made_inputs.decoded(["/project/a.npy"]) == {}
    assert made_inputs.decoded({"/project/a.npy": good, "/project/b.npy": good}, limit=8) == \
        {"/project/a.npy": b"\x93NUMPY"}


def test_the_making_script_loops_a_few_times() -> None:
    assert list(made_inputs.capped_range(50000)) == [0, 1, 2, 3]
    assert list(made_inputs.capped_range(1, 3)) == [1, 2]
    assert list(made_inputs.capped_range(10, 0, -3)) == [10, 7, 4, 1]


@pytest.mark.parametrize(("missing", "made", "options", "given"), [
    # the default `_springs` in the name read; the maker wrote `_springs5` in its place
    ("/p/data/loc_train_springs.npy", ["/p/data/loc_train_springs5.npy", "/p/data/vel_train_springs5.npy"],
     {"--suffix": "_springs", "--model": "mlp"}, ("--suffix", "_springs5")),
    # a value holding the default comes first
    ("/p/data/x_a.npy", ["/p/data/x_b.npy", "/p/data/x_a2.npy"], {"--suffix": "_a"}, ("--suffix", "_a2")),
    # another folder, another stem, nothing in the default's place, or a default too short: nothing
    ("/p/data/loc_train_springs.npy", ["/p/other/loc_train_springs5.npy"], {"--suffix": "_springs"}, None),
    ("/p/data/loc_train_springs.npy", ["/p/data/vel_train_springs5.npy"], {"--suffix": "_springs"}, None),
    ("/p/data/loc_train_springs.npy", ["/p/data/loc_train.npy"], {"--suffix": "_springs"}, None),
    ("/p/data/x_a.npy", ["/p/data/x_ab.npy"], {"--suffix": "a"}, None),
    # a value that reads as another option is not given
    ("/p/data/x_a.npy", ["/p/data/x-z.npy"], {"--suffix": "_a"}, None),
])
def test_an_option_that_names_a_made_file(missing, made, options, given) -> None:
    assert made_inputs.option_naming(missing, made, options) == given
