import pytest
import torch

from critwin_lib import schedules
from critwin_lib.config import ConfigError, TrainConfig, WDSchedule


def test_window_edges_start_inside_end_outside():
    s = WDSchedule.window(100, 50, 2.0)
    assert schedules.wd_at(s, 99) == 0.0
    assert schedules.wd_at(s, 100) == 2.0
    assert schedules.wd_at(s, 149) == 2.0
    assert schedules.wd_at(s, 150) == 0.0
    lam = schedules.wd_values(s, 200)
    assert lam[100:150].tolist() == [2.0] * 50 and lam.sum() == 100.0


def test_budget_matched_window_realises_the_budget():
    for start, length in [(0, 1600), (2400, 1600), (4800, 1600), (37, 60)]:  # λ up to 80, under the bound
        s = WDSchedule.budget_matched(4800.0, start, length)
        assert schedules.budget(s, 6400) == pytest.approx(4800.0)
        assert schedules.wd_values(s, 6400).sum() == pytest.approx(4800.0)


def test_constant_and_several_windows():
    assert schedules.budget(WDSchedule.constant(0.75), 6400) == pytest.approx(4800.0)
    s = WDSchedule(base=0.1, windows=((10, 20, 1.0), (0, 5, 2.0)))
    assert s.windows == ((0, 5, 2.0), (10, 20, 1.0))
    assert [schedules.wd_at(s, t) for t in (0, 4, 5, 10, 19, 20)] == [2.0, 2.0, 0.1, 1.0, 1.0, 0.1]
    assert schedules.budget(s, 30) == pytest.approx(2.0 * 5 + 1.0 * 10 + 0.1 * 15)


def test_a_ramp_goes_linearly_from_its_start_value_towards_its_end_value():
    s = WDSchedule(windows=((0, 10, 6.0),), ramps=((10, 14, 6.0, 0.0),))
    assert [schedules.wd_at(s, t) for t in (9, 10, 11, 13, 14)] == [6.0, 6.0, 4.5, 1.5, 0.0]
    assert schedules.wd_values(s, 16).tolist() == [schedules.wd_at(s, t) for t in range(16)]
    assert schedules.budget(s, 16) == pytest.approx(60 + 6 + 4.5 + 3 + 1.5)
    assert not s.is_none and WDSchedule(ramps=((0, 4, 0.0, 0.0),)).is_none
    assert "6→0" in s.label


@pytest.mark.parametrize("ramps", [((5, 12, 1.0, 0.0),), ((4, 4, 1.0, 0.0),), ((12, 14, -1.0, 0.0),), ((12, 14, 1.0),)])
def test_a_bad_ramp_is_refused_before_any_training(ramps):
    with pytest.raises(ConfigError, match="wd"):
        WDSchedule(windows=((0, 10, 6.0),), ramps=ramps)


def test_lr_warmup_then_constant_and_effective_budget():
    t = TrainConfig(steps=100, lr=1e-3, warmup_steps=10)
    assert schedules.lr_at(t, 0) == pytest.approx(1e-4)
    assert schedules.lr_at(t, 9) == pytest.approx(1e-3)
    assert schedules.lr_at(t, 50) == pytest.approx(1e-3)
    s = WDSchedule.window(50, 20, 2.0)
    assert schedules.effective_budget(s, t) == pytest.approx(1e-3 * 40)


def test_apply_hyperparams_decays_only_decay_groups():
    a, b = torch.nn.Parameter(torch.ones(2, 2)), torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.AdamW([{"params": [a], "decay": True}, {"params": [b], "decay": False}])
    schedules.apply_hyperparams(opt, 0.01, 3.0)
    assert [(g["lr"], g["weight_decay"]) for g in opt.param_groups] == [(0.01, 3.0), (0.01, 0.0)]
