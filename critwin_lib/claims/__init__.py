"""The claims layer: each page's runs, numbers and verdict (one module per family of claims), on a shared core.

    core          the result type, fetching runs, fates, per-condition tables, shared parameter checks
    onsets        the onset sweep (C4, C4b, C5, C10 and the explorer read it)
    cliff         C4's fine onset grid around the coarse edge and the cliff's rule
    rules         every verdict rule, as a pure function
    history       the rules no longer in force, for the pages' rule histories
    calibration   the calibration page (no claim)
    fates         fate counts, paired comparisons over seeds, the levels tests are held to, the power of a design
    looks         a page's seeds looked at block by block (the sequential design of C1 and C2)
    other_tasks   the anchor claims' weight-decay conditions on the other tasks (C8, C9)
    anchors       the anchor conditions repeated under another model or optimizer (C11 and C12 build on them)
    window_placement  C1, C2/C3
    window_onset  C4, C4b
    init_scale    C5, C6/C7 and the explorer's grid
    rates         C10
    instrumentation  C13
    grokking      C8 (modular-arithmetic grokking)
    scan_split    C9 (SCAN add_prim_jump)
    depth         C11 (4 layers)
    optimizer     C12 (SGD with momentum)
    registry      one declaration per page: its claim ids, notebook and functions
    scoreboard    results/claims.csv (`python -m critwin_lib.claims`), one row per claim and profile
    lengths       a page's quick and paper lengths side by side (reads the registry and the scoreboard)
    answer        the book's answer at a glance: the intro's figure (reads the registry and C4's results)

A family module imports the core modules and the lower library only, never another family; the registry
imports the families; nothing in the library imports the registry except the scoreboard, `lengths`, `answer` and the
notebook runner.
"""
