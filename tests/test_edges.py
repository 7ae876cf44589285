import math

import pytest

from critwin_lib.edges import find_edge, transition_width


def step_response(edge: float, rising: bool = True):
    calls = []

    def evaluate(onsets):
        calls.append(list(onsets))
        return {o: (0.9 if (o >= edge) == rising else 0.15) for o in onsets}

    return evaluate, calls


@pytest.mark.parametrize("rising", [True, False])
@pytest.mark.parametrize("edge", [150, 2350, 4999, 5001])
def test_find_edge_brackets_the_switch_to_one_grid_step(edge, rising):
    evaluate, calls = step_response(edge, rising)
    e = find_edge(evaluate, 0, 6400, threshold=0.5, resolution=100, per_round=2)
    assert e.hi - e.lo == 100 and e.lo < edge <= e.hi
    assert e.uncertainty == 50 and e.rising == rising
    assert all(o % 100 == 0 for batch in calls for o in batch)
    assert len({o for batch in calls for o in batch}) == sum(len(b) for b in calls)  # nothing evaluated twice
    assert len(calls) <= 1 + math.ceil(math.log(64, 3)) + 1


def test_find_edge_refuses_a_bracket_without_a_crossing():
    evaluate, _ = step_response(10_000)
    with pytest.raises(ValueError, match="no crossing"):
        find_edge(evaluate, 0, 6400, threshold=0.5, resolution=100)
    with pytest.raises(ValueError, match="lo < hi"):
        find_edge(evaluate, 6400, 0, threshold=0.5, resolution=100)


@pytest.mark.parametrize("edge", [410, 433, 799])
def test_find_edge_from_a_coarse_bracket_off_the_grid(edge):
    evaluate, calls = step_response(edge)
    e = find_edge(evaluate, 400, 800, threshold=0.5, resolution=32)
    assert e.hi - e.lo <= 32 and e.lo < edge <= e.hi
    assert all(o % 32 == 0 for batch in calls[1:] for o in batch)  # only the given ends are off the grid


def test_transition_width():
    onsets, means = [0, 100, 200, 300, 400], [0.15, 0.14, 0.61, 0.93, 0.94]
    assert transition_width(onsets, means, low=0.2, high=0.9) == 200
    assert transition_width(onsets, means, low=0.2, high=0.6) == 100
    assert math.isnan(transition_width(onsets, means, low=0.1, high=0.9))
