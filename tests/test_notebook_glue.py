"""The package's ``glue`` writes what myst-nb's glue roles read, and only in a
kernel."""

import nbformat
import pytest
from nbclient import NotebookClient

from transformer.notebook import GLUE_PREFIX, glue, name_list


def test_glue_outside_a_kernel_does_nothing(capsys):
    glue("answer", 42)
    assert capsys.readouterr().out == ""


def test_glue_rejects_a_name_that_is_not_a_string():
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        glue(3, 1.0)


@pytest.mark.slow
def test_glue_in_a_kernel_records_the_value_under_its_name():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from transformer.notebook import glue\n"
            "glue('share', 0.25)\nglue('n', 1234)"
        )
    ]
    NotebookClient(nb, kernel_name="python3", timeout=60).execute()
    outputs = nb.cells[0].outputs
    records = {o.metadata["scrapbook"]["name"]: o for o in outputs}
    assert set(records) == {"share", "n"}
    assert records["share"].data[GLUE_PREFIX + "text/plain"] == "0.25"
    assert records["n"].data[GLUE_PREFIX + "text/plain"] == "1234"
    # Nothing visible: every MIME type carries the prefix Jupyter does not render.
    assert all(key.startswith(GLUE_PREFIX) for o in outputs for key in o.data)


def test_name_list_reads_as_a_sentence():
    assert name_list(["RoPE"]) == "RoPE"
    assert name_list(("RoPE", "GQA")) == "RoPE and GQA"
    assert name_list(["a", "b", "c"]) == "a, b and c"
    with pytest.raises(ValueError, match="at least one name"):
        name_list([])
