# The make variables (docs/make-variables.md, generated from these files by scripts/make_vars.py): a user variable
# is a conditional assignment (the ?= operator) documented by the `#:` lines right above it; a `#:env` line (a
# name, then its meaning) declares an environment variable a target's script reads (make passes command-line
# variables on to its recipes). No comment goes on an assignment line: make keeps the blanks before it in the value.
#   make vars              every variable, its default and meaning
#
# A variable given on the command line that no makefile here reads (`make infer PRESET=x`: the variable is
# INFER_PRESET) is a warning, one line on stderr naming the closest known one; the target still runs (a variable
# the target's programs read from the environment is passed on as make always does). Names only, never values,
# go to the helper's command line, and only names of letters, digits and _ (mk/shell.mk).
.PHONY: vars _vars-values

_vars_py = $(firstword $(wildcard $(RL)/python) $(shell command -v python3))
vars:
	@$(if $(_vars_py),$(_vars_py) scripts/make_vars.py text,echo "make vars needs python3 (or make setup)"; exit 2)

# scripts/make_vars.py reads the defaults from here (names it found: make prints each value, no shell sees it).
_vars-values:
	@:$(foreach v,$(_vars_print),$(info $(v)=$($(v))))

_vars_empty :=
_vars_space := $(_vars_empty) $(_vars_empty)
# `?=` and `#:env` spelt so that these lines do not declare anything themselves.
_vars_assign := ?$(_vars_empty)=
_vars_env := \#$(_vars_empty):env
_vars_text = $(foreach f,Makefile $(wildcard mk/*.mk),$(file <$(f)))
_vars_known = $(patsubst %$(_vars_assign),%,$(filter %$(_vars_assign),$(subst $(_vars_space)$(_vars_assign),$(_vars_assign),$(_vars_text)))) \
	$(patsubst $(_vars_env):%,%,$(filter $(_vars_env):%,$(subst $(_vars_env)$(_vars_space),$(_vars_env):,$(_vars_text))))
_vars_cmdline = $(foreach v,$(.VARIABLES),$(if $(filter command line override,$(origin $(v))),$(v)))
_vars_name_chars := $(_alnum) _
_vars_safe = $(foreach v,$(1),$(if $(strip $(call _without,$(v),$(_vars_name_chars))),,$(v)))
_vars_close = $(if $(and $(1),$(_vars_py)),$(shell $(_vars_py) -I -S scripts/make_vars.py suggest $(1) 2>/dev/null))
# One line per unknown name: "make: PRESET is not a variable of this project's makefiles (...); did you mean INFER_PRESET?".
_vars_guess = $(filter-out -,$(patsubst $(1):%,%,$(filter $(1):%,$(_vars_pairs))))
_vars_line = make: $(1) is not a variable of this project's makefiles (make vars lists them)$(if $(call _vars_guess,$(1)),; did you mean $(call _vars_guess,$(1))?)
define _vars_warn
$(eval _vars_unknown := $(filter-out $(_vars_known) _vars_print _vars_checked,$(_vars_cmdline)))
$(eval _vars_names := $(call _vars_safe,$(_vars_unknown)))
$(eval _vars_pairs := $(join $(addsuffix :,$(_vars_names)),$(call _vars_close,$(_vars_names))))
$(foreach v,$(_vars_unknown),$(file >>/dev/stderr,$(call _vars_line,$(v))))
endef
# Checked once, by the make the user started: a sub-make of these makefiles ($(MAKE) in a recipe) inherits the
# command line and is started with _vars_checked=1. (Not MAKELEVEL: a make run by a program that make started, the
# test suite under make test, is a user's make too.)
_vars_check = $(if $(_vars_checked),,$(if $(_vars_cmdline),$(strip $(_vars_warn))))
