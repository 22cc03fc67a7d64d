# The Executable Transformer. `make help` lists the targets.
#
# With no virtual environment active, every target first creates .venv and
# installs requirements.txt and the package (editable) into it. With one
# active, it installs into that one instead.

SHELL      := /bin/bash
PYTHON     ?= python3
VENV       ?= .venv
BUILDDIR   ?= _build
SPHINXOPTS ?= -n -W --keep-going -j auto
PYTESTOPTS ?=

# Paths stay relative where they can, and are quoted in recipes, so that a
# checkout (or an active venv) whose path contains a space works. No target
# or prerequisite names a path outside the checkout: make splits them at spaces.
ifdef VIRTUAL_ENV
ENVDIR := $(VIRTUAL_ENV)
else
ENVDIR := $(VENV)
endif
BIN   := $(ENVDIR)/bin
STAMP := $(ENVDIR)/.executable-transformer-installed

# Kernels use this environment's python3 kernelspec, not one in ~/.local.
export JUPYTER_PREFER_ENV_PATH := 1
# Python 3.11's frozen modules make the debugger warn at every kernel start.
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# matplotlib's font cache belongs to this checkout's virtual environment: a cache
# shared with another checkout can point at fonts that are gone
export MPLCONFIGDIR := $(CURDIR)/_build/.matplotlib

.DEFAULT_GOAL := help
.PHONY: help setup html chapter notebooks test test-fast livehtml serve clean clean-html distclean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-11s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: ## Create .venv (if no venv is active) and install everything
	@if [ -f "$(STAMP)" ] && [ "$(STAMP)" -nt requirements.txt ] && [ "$(STAMP)" -nt pyproject.toml ]; then exit 0; fi; \
	made=; \
	if [ -z "$(VIRTUAL_ENV)" ] && ! "$(BIN)/python" -m pip --version >/dev/null 2>&1; then \
	  made=1; trap 'rm -rf "$(VENV)"' INT TERM; rm -rf "$(VENV)"; \
	  echo "$(PYTHON) -m venv $(VENV)"; \
	  "$(PYTHON)" -m venv "$(VENV)" || { rm -rf "$(VENV)"; echo "Set-up failed: removed the half-made $(VENV)."; exit 1; }; \
	fi; \
	echo "pip install -r requirements.txt -e ."; \
	if ! "$(BIN)/python" -m pip install --disable-pip-version-check -r requirements.txt -e .; then \
	  if [ -n "$$made" ]; then rm -rf "$(VENV)"; echo "Set-up failed: removed the half-made $(VENV)."; fi; \
	  exit 1; \
	fi; \
	touch "$(STAMP)"

html: setup ## Build the book into _build/html (runs changed chapters)
	"$(BIN)"/sphinx-build -M html book $(BUILDDIR) -c . $(SPHINXOPTS)

chapter: setup ## Build one chapter quickly: make chapter CH=attention (not strict)
	@test -n "$(CH)" || { echo "usage: make chapter CH=<name of book/NAME.md>"; exit 2; }
	BOOK_ONLY_CHAPTER=$(CH) "$(BIN)"/sphinx-build -M html book $(BUILDDIR)/chapters/$(CH) -c . -n --keep-going
	@echo "Open $(BUILDDIR)/chapters/$(CH)/html/$(CH).html"

notebooks: html ## Write every chapter as a stand-alone notebook to _build/notebooks
	@ls $(BUILDDIR)/notebooks

test: setup ## Run the whole test suite, book build and browser tests included
	"$(BIN)"/python -m pytest $(PYTESTOPTS)

test-fast: setup ## Run the unit tests only (no book build, no browser)
	"$(BIN)"/python -m pytest -m "not slow and not browser" $(PYTESTOPTS)

livehtml: setup ## Rebuild and reload the book in a browser as you edit
	"$(BIN)"/sphinx-autobuild book $(BUILDDIR)/html -c . $(filter-out -W,$(SPHINXOPTS)) \
	  --watch code/transformer --watch conf.py --host 127.0.0.1

serve: ## Preview the built book at http://127.0.0.1:8000
	@test -f $(BUILDDIR)/html/index.html || { echo "Run 'make html' first."; exit 1; }
	"$(PYTHON)" -m http.server 8000 --bind 127.0.0.1 --directory "$(BUILDDIR)/html"

clean-html: ## Remove the built site but keep the execution cache
	find $(BUILDDIR) -mindepth 1 -maxdepth 1 ! -name .jupyter_cache -exec rm -rf {} + 2>/dev/null || true

clean: ## Remove everything built, the execution cache included
	rm -rf $(BUILDDIR) .pytest_cache .hypothesis
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

distclean: clean ## Also remove .venv
	rm -rf $(VENV)

# -- The whole book as one PDF (issue #15) ---------------------------------------
# The single-page build (chapters from the site's execution cache; its own
# doctrees, so that `make html` keeps its own) printed by Chromium, the browser the
# tests drive: no TeX. tools/print_pdf.py says how.
PDFDIR := $(BUILDDIR)/pdf
.PHONY: pdf
pdf: setup ## Write the whole book as one PDF: _build/pdf/executable-transformer.pdf
	"$(BIN)/sphinx-build" -b singlehtml book "$(PDFDIR)/singlehtml" -c . -d "$(PDFDIR)/doctrees" -n --keep-going -j auto -Q \
	  -D package_cache_root="$(BUILDDIR)/.jupyter_cache"
	"$(BIN)/python" tools/print_pdf.py "$(PDFDIR)/singlehtml" "$(PDFDIR)/executable-transformer.pdf"
	@# The site's index links the PDF beside it: put it there when the site is built.
	if [ -d "$(BUILDDIR)/html" ]; then cp "$(PDFDIR)/executable-transformer.pdf" "$(BUILDDIR)/html/"; fi
