import dataclasses

import pytest

from critwin_lib import config
from critwin_lib.config import ConfigError
from critwin_lib.sizes import get_profile


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: config.ModelConfig(init_gamma=0), "model.init_gamma"),
        (lambda: config.ModelConfig(init_gamma=-1.0), "model.init_gamma"),
        (lambda: config.ModelConfig(init_mode="log"), "model.init_mode"),
        (lambda: config.ModelConfig(d_model=64, n_head=3), "model.n_head"),
        (lambda: config.ModelConfig(n_layer=0), "model.n_layer"),
        (lambda: config.AnchorTask(name="parity"), "task.name"),
        (lambda: config.AnchorTask(variant="C"), "task.variant"),
        (lambda: config.TrainConfig(lr=0), "train.lr"),
        (lambda: config.TrainConfig(steps=100, warmup_steps=200), "train.warmup_steps"),
        (lambda: config.TrainConfig(optimizer="lion"), "train.optimizer"),
        (lambda: config.TrainConfig(wd_params="no-embeddings"), "train.wd_params"),
        (lambda: config.WDSchedule(base=-0.1), "wd.base"),
        (lambda: config.WDSchedule.window(10, 5, -1.0), "wd.windows[0]"),
        (lambda: config.WDSchedule(windows=((10, 5, 1.0),)), "wd.windows[0]"),
        (lambda: config.WDSchedule(windows=((0, 10, 1.0), (5, 15, 1.0))), "wd.windows"),
        (lambda: config.RunConfig(train=config.TrainConfig(steps=1000),
                                  wd=config.WDSchedule.window(900, 200, 1.0)), "wd.windows[0]"),
        (lambda: get_profile("huge"), "profile"),
    ],
)
def test_bad_values_raise_one_line_naming_the_field(build, field):
    with pytest.raises(ConfigError) as err:
        build()
    msg = str(err.value)
    assert msg.startswith(f"{field}:")
    assert "\n" not in msg


def test_window_beyond_the_run_names_the_window():
    with pytest.raises(ConfigError, match=r"ends after the run \(train.steps = 1000\)"):
        config.RunConfig(train=config.TrainConfig(steps=1000), wd=config.WDSchedule.window(900, 200, 1.0))


def test_sigma0_defaults_to_inverse_sqrt_width_and_modes_give_std():
    m = config.ModelConfig(d_model=64, init_gamma=2.0)
    assert m.init_sigma0 == pytest.approx(0.125)
    assert m.init_std == pytest.approx(0.25)
    e = config.ModelConfig(d_model=64, init_gamma=0.5, init_mode="exponent")
    assert e.init_std == pytest.approx(64 ** -0.5)
    assert m.gamma_exponent == pytest.approx(-__import__("math").log(0.25) / __import__("math").log(64))


def test_dict_round_trip_and_replace():
    cfg = config.RunConfig(wd=config.WDSchedule.window(10, 20, 0.5))
    assert config.from_dict(config.to_dict(cfg)) == cfg
    cfg2 = config.replace(cfg, **{"model.init_gamma": 1.5, "train.seed": 3})
    assert cfg2.model.init_gamma == 1.5 and cfg2.train.seed == 3 and cfg2.task == cfg.task
    with pytest.raises(ConfigError, match="model.gama"):
        config.replace(cfg, **{"model.gama": 1.0})


def test_configs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.ModelConfig().init_gamma = 3.0  # type: ignore[misc]


def test_profile_fractions_map_to_steps():
    p = get_profile("quick")
    assert p.step_at(0.375) == 2400
    with pytest.raises(ConfigError, match="^x:"):
        p.step_at(1.5, "x")


def test_a_run_without_weight_decay_is_the_same_under_every_protocol_of_its_learning_rate():
    from critwin_lib import experiment, protocol

    P = get_profile("smoke")
    none = config.WDSchedule.none()
    keys = {name: experiment.run_key(protocol.anchor_run(P, 0, none, protocol=name)) for name in protocol.PROTOCOLS}
    assert keys["mid-fit"] == keys["mid-fit-matrices"] and keys["early-fit"] == keys["early-fit-matrices"]
    assert keys["mid-fit"] != keys["early-fit"]  # the learning rate still differs
    decayed = {name: protocol.anchor_run(P, 0, config.WDSchedule.window(8, 8, 1.0), protocol=name)
               for name in ("mid-fit", "mid-fit-matrices")}
    assert decayed["mid-fit"].train.wd_params == "all" and decayed["mid-fit-matrices"].train.wd_params == "matrices"
    assert config.WDSchedule.window(8, 8, 0.0).is_none and not config.WDSchedule.constant(0.1).is_none


@pytest.mark.parametrize(("params", "name"), [({"protocol_name": "fast"}, "protocol_name"),
                                              ({"window_lambda": -1.0}, "window_lambda")])
def test_claim_parameters_name_the_bad_one(tmp_path, params, name):
    from critwin_lib.claims import window_placement

    kwargs = {"profile": "smoke", "n_seeds": 1, "gamma": 1.0, "window_start_frac": 0.375, "window_frac": 0.25,
              "window_lambda": 0.0, "slider_starts": [], "results_dir": str(tmp_path), **params}
    with pytest.raises(ConfigError, match=f"^{name}:"):
        window_placement.c01(**kwargs)
    assert not any(tmp_path.iterdir())  # nothing trained


def test_the_papers_decay_set_is_a_run_key_of_its_own():
    from critwin_lib import experiment

    cfg = config.RunConfig(train=config.TrainConfig(wd_params="matrices"), wd=config.WDSchedule(base=1.0))
    paper = config.replace(cfg, **{"train.wd_params": "matrices-no-embeddings"})
    assert paper.train.wd_params == "matrices-no-embeddings"
    assert experiment.run_key(paper) != experiment.run_key(cfg)
