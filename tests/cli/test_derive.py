"""``symparams derive``: a document to a file or standard output, --set and --head, template errors."""

from symparams.cli import main


def write(tmp_path, text, name="t.j2"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_derive_writes_a_file_and_reports_template_errors(tmp_path, capsys):
    out = tmp_path / "bert.zh.tex"
    assert main(["derive", "bert-base", "--format", "tex", "--lang", "zh", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("\\documentclass") and "109,482,240" in text
    bad = write(tmp_path, "{{ missing }}")
    assert main(["derive", "bert-base", "--format", "md", "--template", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "symparams: error: template" in err and "missing" in err


def test_derive_with_set_and_head(capsys):
    assert main(["derive", "bert-base", "--set", "L=24", "--head", "sequence-classification", "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "### 2.4 Task head: Classifier (`classifier`)" in text  # as BertForSequenceClassification names it
    assert "1,538" in text  # 768 × 2 + 2: the classifier of two labels


def test_derive_takes_its_format_from_the_output_name_else_markdown(tmp_path, capsys):
    for name, start in (("a.tex", "\\documentclass"), ("b.HTML", "<!DOCTYPE html>"), ("c.md", "# Counting"),
                        ("d.txt", "# Counting")):
        assert main(["derive", "bert-base", "-o", str(tmp_path / name)]) == 0
        assert (tmp_path / name).read_text(encoding="utf-8").startswith(start), name
    assert main(["derive", "bert-base"]) == 0
    assert capsys.readouterr().out.startswith("# Counting the parameters of BERT-base")
    assert main(["derive", "bert-base", "--format", "tex", "-o", str(tmp_path / "e.md")]) == 0  # asked: kept
    assert (tmp_path / "e.md").read_text(encoding="utf-8").startswith("\\documentclass")
