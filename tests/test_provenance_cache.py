"""The parsed-imports cache of :mod:`conflictlab.provenance`: a closure read
from it is the one parsed afresh, an edited source is parsed again, and a
broken or unwritable cache is only not used."""

import json
import subprocess
import sys
from pathlib import Path

from conflictlab import provenance

REPO = Path(__file__).resolve().parent.parent
HASHES = (
    "from pathlib import Path\n"
    "from conflictlab.provenance import code_hash\n"
    "root = Path(sys.argv[1])\n"
    "print(sorted((s.name, code_hash(s, root)) for s in (root / 'workflow' / 'scripts').glob('*.py')))\n"
)


def code_hashes(cache_home: Path) -> str:
    """Every script's code hash, from a fresh process whose cache folder is ``cache_home``."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys\n" + HASHES, str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache_home)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_hashes_from_the_cache_equal_hashes_parsed_afresh(tmp_path):
    fresh = code_hashes(tmp_path / "a")
    cache = tmp_path / "a" / "conflictlab" / "parsed-imports.json"
    assert len(json.loads(cache.read_text())) > 100  # every library module the scripts reach
    assert code_hashes(tmp_path / "a") == fresh  # read from the cache
    cache.write_text("{not json")
    assert code_hashes(tmp_path / "a") == fresh  # a broken cache is parsed past, then rewritten whole
    assert len(json.loads(cache.read_text())) > 100
    (tmp_path / "a file").write_text("")  # a cache folder that cannot be made, even by root
    assert code_hashes(tmp_path / "a file") == fresh


def test_an_edited_source_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = provenance._ParsedCache()
    before = "import conflictlab.io\n"
    cache.get(before)
    cache.put(before, provenance._parse(before, "m.py"))
    cache.save()
    reloaded = provenance._ParsedCache()
    assert reloaded.get(before) == provenance._parse(before, "m.py")
    after = "import conflictlab.stats\nx.claims\n"
    assert reloaded.get(after) is None
    assert provenance._parse(after, "m.py")[0] == {"conflictlab.stats"}
    assert "claims" in provenance._parse(after, "m.py")[3]


def test_a_full_cache_keeps_only_what_the_process_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(provenance._ParsedCache, "MAX_ENTRIES", 3)
    old = provenance._ParsedCache()
    for i in range(3):  # three edits of one module, within the limit: all kept
        source = f"import conflictlab.io\nx = {i}\n"
        old.get(source)
        old.put(source, provenance._parse(source, "m.py"))
    old.save()
    new = provenance._ParsedCache()
    for source in ("import conflictlab.stats\n", "x = 0\n"):
        new.get(source)
        new.put(source, provenance._parse(source, "m.py"))
    new.save()  # five entries, over the limit: the two this process used remain
    kept = provenance._ParsedCache()
    assert kept.get("import conflictlab.stats\n") is not None and kept.get("x = 0\n") is not None
    assert kept.get("import conflictlab.io\nx = 0\n") is None
    assert len(kept.entries) == 2
