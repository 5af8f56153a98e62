"""Which release `plan` installs: the newest final release for the hardware family, unless the model's architecture
or (with --keep-driver) the installed driver rules it out — and every release passed over says why."""

from __future__ import annotations

from ascend_doctor.deploy.release import choose_release
from ascend_doctor.text.versions import parse_version
from tests.helpers import shipped


def test_the_newest_final_release_of_the_family_with_its_image():
    m = shipped().matrix
    r = choose_release(m, "A3", "Qwen3ForCausalLM")
    finals = [x for x in m.releases if "A3" in x.hardware and not parse_version(x.version).is_prerelease()]
    assert r.vllm_ascend == max(finals, key=lambda x: parse_version(x.version)).version
    assert r.image == f"quay.io/ascend/vllm-ascend:v{r.vllm_ascend}-a3" and r.passed_over == []
    assert choose_release(m, "310P", "Qwen3ForCausalLM").image.endswith("-310p")


def test_an_old_driver_keeps_the_plan_on_a_release_whose_cann_it_runs():
    m = shipped().matrix
    newest = choose_release(m, "A2", "Qwen3ForCausalLM")
    old = choose_release(m, "A2", "Qwen3ForCausalLM", driver="24.1.0")
    assert parse_version(old.vllm_ascend) < parse_version(newest.vllm_ascend)
    # every newer release is passed over for its CANN (the CANN 8.2+ lines pair 25.x HDKs; 8.3.RC2 with 25.3.RC1 by
    # the maintainer's link in vllm-ascend#4972), or for a vLLM that predates the architecture
    assert old.passed_over and all("does not run on driver 24.1.0" in str(w) or "does not list Qwen3ForCausalLM"
                                   in str(w) for w in old.passed_over)
    assert any("CANN 8.3.RC2 does not run on driver 24.1.0" in str(w) for w in old.passed_over)
    assert m.cann_driver_compatible(old.cann, "24.1.0").compatible is not False
    assert old.driver_note and "24.1.0" in old.driver_note


def test_an_architecture_the_newest_vllm_does_not_list_is_passed_over():
    m = shipped().matrix
    r = choose_release(m, "A2", "NoSuchModelForCausalLM")
    # Every release whose vLLM architecture list the matrix records is passed over, saying why; one whose list is not
    # recorded cannot be ruled out and is chosen (or none is left).
    assert r is None or m.vllm_architectures(r.vllm) is None
    if r is not None:
        assert r.passed_over and all("does not list NoSuchModelForCausalLM" in str(w) for w in r.passed_over)
    assert choose_release(m, "A2", "Qwen3ForCausalLM").passed_over == []


def test_a_release_whose_vllm_lacks_the_planned_parser_is_passed_over():
    """deepseek_v4 first appears in vLLM 0.20.0; driver 24.1.0 runs CANN up to 8.2.RC1 (the MindIE 2.1.RC1 grid
    pairs it with 24.1.0) and none from 8.3 on (their HDKs are 25.x), so nothing newer than the CANN 8.0-8.2.RC1
    releases: no release both runs on that driver and has the parser, so there is no release to name."""
    m = shipped().matrix
    assert choose_release(m, "A2", None, parsers={"tool_parser": "hermes"}).passed_over == []
    old = choose_release(m, "A2", None, driver="24.1.0", parsers={"tool_parser": "hermes"})
    assert old.cann in ("8.0.0", "8.1.RC1", "8.2.RC1"), old
    assert choose_release(m, "A2", None, driver="24.1.0", parsers={"tool_parser": "deepseek_v4"}) is None
    r = choose_release(m, "A2", None, parsers={"tool_parser": "deepseek_v4"})
    assert parse_version(r.vllm) >= parse_version(m.first_vllm_release_with("tool_parser", "deepseek_v4"))


def test_when_no_release_fits_the_plan_says_why():
    from ascend_doctor.deploy.release import why_none

    m = shipped().matrix
    text = str(why_none(m, "A2", None, "24.1.0", {"tool_parser": "deepseek_v4"}))
    assert text.startswith("no vllm-ascend release of the matrix fits: vllm-ascend ")
    assert "does not run on driver 24.1.0" in text
    assert str(why_none(m, "A9", None)) == "the matrix has no vllm-ascend release for A9"
