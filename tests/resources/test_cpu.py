"""/proc/cpuinfo read in one place: every logical CPU's value of a key, in order."""

from hf_srnets.resources.cpu import cpuinfo_values

# The shape of Linux's /proc/cpuinfo: "key<TAB>: value" lines, one block per logical CPU.
TWO_CPUS = (
    "processor\t: 0\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu avx2\n\n"
    "processor\t: 1\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu avx2\n"
)


def test_every_cpus_value_of_a_key_in_order(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(TWO_CPUS)
    assert cpuinfo_values("model name", str(path)) == ["AMD EPYC 9R14", "AMD EPYC 9R14"]
    assert cpuinfo_values("flags", str(path)) == ["fpu avx2", "fpu avx2"]
    assert cpuinfo_values("microcode", str(path)) == []


def test_no_cpuinfo_file_is_none_not_an_empty_list(tmp_path):
    assert cpuinfo_values("flags", str(tmp_path / "missing")) is None
