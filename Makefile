# critwin: `make reproduce` trains what is missing and builds the book; `make test` runs the whole suite.
# Every target bootstraps .venv from requirements.txt on a fresh machine.
PROFILE   ?= quick
SCHEDULER ?=
PYTHON    ?= python3
N         ?= 5
# Make variables are checked here, before any shell (or make itself) expands them: each is taken as the text it is
# ($(value ...): a '$(shell ...)' in it is not run) and may hold only the characters its values use.
override PROFILE   := $(value PROFILE)
override N         := $(value N)
override CLAIMS    := $(value CLAIMS)
override SCHEDULER := $(value SCHEDULER)
_only = $(if $(1),$(call _only,$(wordlist 2,$(words $(1)),$(1)),$(subst $(firstword $(1)),,$(2))),$(2))
_digits := 0 1 2 3 4 5 6 7 8 9
_letters := a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z
ifneq ($(words $(PROFILE)) $(filter $(PROFILE),smoke quick paper),1 $(PROFILE))
$(error PROFILE: must be one of smoke, quick, paper; got '$(PROFILE)')
endif
ifneq ($(words $(N))$(call _only,$(_digits),$(N)),1)
$(error N: must be a whole number of runs, got '$(N)')
endif
ifneq ($(strip $(call _only,C b $(_digits),$(CLAIMS))),)
$(error CLAIMS: must be claim ids separated by spaces (C1 C4b ...), got '$(CLAIMS)')
endif
ifneq ($(strip $(call _only,$(_letters) $(_digits) . : / - _ [ ],$(SCHEDULER))),)
$(error SCHEDULER: must be a scheduler address such as tcp://127.0.0.1:8786, got '$(SCHEDULER)')
endif
VENV      := .venv
PY        := $(VENV)/bin/python
STAMP     := $(VENV)/.installed
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export CRITWIN_SCHEDULER := $(SCHEDULER)
# smoke runs are plumbing only: keep them out of the shipped results/
RESULTS   := $(if $(filter smoke,$(PROFILE)),-p results_dir ../_build/results-smoke,)

.PHONY: reproduce book html test lint unit bench verify lab clean chromium venv

venv: $(STAMP)
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	$(PY) -m pip install --disable-pip-version-check -q --no-deps -e .
	$(PY) -m critwin_lib.mkl_lever
	touch $@

## reproduce: execute every claim notebook at PROFILE (training only missing runs), then build the book;
## CLAIMS="C1 C4" executes only the pages deciding those ids (other pages missing from the book are executed
## from the stored results, at quick when PROFILE=paper); at paper the shipped scoreboard's paper rows follow
reproduce: $(STAMP)
	$(PY) -m critwin_lib.notebooks run --profile $(PROFILE) $(RESULTS) $(if $(CLAIMS),--claims $(CLAIMS),)
	$(PY) -m critwin_lib.claims --profile $(PROFILE) $(if $(filter smoke,$(PROFILE)),--results _build/results-smoke,)
	$(if $(filter paper,$(PROFILE)),$(PY) -m critwin_lib.claims,)
	$(if $(CLAIMS),$(PY) -m critwin_lib.notebooks run --profile $(if $(filter paper,$(PROFILE)),quick,$(PROFILE)) $(RESULTS) $(if $(filter smoke,$(PROFILE)),,--no-train) --quiet --missing-only --book $(PROFILE),)
	$(MAKE) html PROFILE=$(PROFILE)

## book: build the book from the shipped results only (no training; fails if a run is missing)
book: $(STAMP)
	$(PY) -m critwin_lib.notebooks run --profile $(PROFILE) $(RESULTS) --no-train --quiet
	$(MAKE) html PROFILE=$(PROFILE)

## html: the site from the executed pages in book/claims/, refusing one that failed or ran at another profile
html: $(STAMP)
	$(PY) -m critwin_lib.notebooks check --profile $(PROFILE)
	$(VENV)/bin/jupyter-book build . --all --warningiserror --nitpick --keep-going --quiet
	@echo "book: $(CURDIR)/_build/html/index.html"

## test: ruff, unit tests, every notebook at smoke, the book build and a headless-Chromium check
test: $(STAMP) chromium
	$(VENV)/bin/ruff check .
	$(PY) -m pytest

## bench: training speed of the project's path vs a plain eager model, peak fraction, sweep scaling
bench: $(STAMP)
	$(PY) -m critwin_lib.bench
	$(PY) -m critwin_lib.notebooks plan --profile paper

## verify: check every shipped run's checksums, then train N random shipped runs again and compare histories
verify: $(STAMP)
	$(PY) -m critwin_lib.verify --n $(N)

## lab: JupyterLab on 127.0.0.1 at the live explorer (it prints the URL with its token)
lab: $(STAMP)
	$(PY) -m critwin_lib.mkl_lever exec $(VENV)/bin/jupyter-lab --no-browser --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=$(CURDIR) \
	  $(shell [ "$$(id -u)" = 0 ] && echo --allow-root) notebooks/x01_explorer.ipynb

lint: $(STAMP)
	$(VENV)/bin/ruff check .

unit: $(STAMP)
	$(PY) -m pytest -m "not slow"

chromium:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  ($(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium chromium-driver)

clean:
	rm -rf _build book/claims
