"""docs/ holds exactly the generated documents (symparams.documents.regenerate)."""

from symparams.documents.regenerate import default_dir, documents, drift, write
from symparams.families.presets import all_presets
from tests.reference import ROOT


def test_docs_folder_is_up_to_date():
    """Regenerate every document; docs/ must hold exactly these (``python -m symparams.documents.regenerate``)."""
    directory = ROOT / "docs"
    assert default_dir() == directory
    docs = documents()
    assert len(docs) == 4 * len(all_presets())  # Markdown and LaTeX, English and Chinese
    problems = drift(directory, docs)
    assert not problems, problems[:10]
    assert (directory / "README.md").is_file()


def test_drift_check_notices_changes(tmp_path):
    docs = {"bert-base.en.md": "new text"}
    (tmp_path / "bert-base.en.md").write_text("old text", encoding="utf-8")
    (tmp_path / "gone.zh.tex").write_text("x", encoding="utf-8")
    assert drift(tmp_path, docs) == ["changed: bert-base.en.md", "stale: gone.zh.tex"]
    assert drift(tmp_path / "empty", docs) == ["missing: bert-base.en.md"]


def test_write_updates_what_changed_and_removes_stale_documents(tmp_path):
    docs = {"bert-base.en.md": "new text", "bert-base.zh.md": "same"}
    (tmp_path / "bert-base.en.md").write_text("old text", encoding="utf-8")
    (tmp_path / "bert-base.zh.md").write_text("same", encoding="utf-8")
    (tmp_path / "gone.zh.tex").write_text("x", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("kept", encoding="utf-8")  # not a generated name: left alone
    assert write(tmp_path, docs) == [tmp_path / "bert-base.en.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bert-base.en.md", "bert-base.zh.md", "notes.txt"]
    assert drift(tmp_path, docs) == []
