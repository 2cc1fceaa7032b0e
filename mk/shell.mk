# User values in recipes (docs/reliability.md, "Make variables"): a value a user gives (MODEL, a path, ARGS) is
# never evaluated by a shell, nor by make's $(shell ...). It reaches a recipe's shell as one word through
# $(call q,VALUE), quoted as Python's shlex.quote quotes: left bare when it holds only [A-Za-z0-9_@%+=:,./-] (what
# `make -n` shows stays readable), else in single quotes with each ' written '\'' , so no $, `, ", ;, space
# or glob in it means anything to bash. Word lists (ARGS) go through $(call qwords,LIST): split at whitespace,
# each word quoted. Names are checked before anything runs: $(call need_name,VAR,target) and
# $(call need_one_of,VAR,target,CHOICES) stop make with one line (exit 2) under `make -n` too.
comma := ,
_alnum := a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z \
	0 1 2 3 4 5 6 7 8 9
_shell_safe := $(_alnum) _ @ % + = : $(comma) . / -
# $(1) without any character of the word list $(2) (what is left is what is not in it).
_without = $(if $(2),$(call _without,$(subst $(firstword $(2)),,$(1)),$(wordlist 2,$(words $(2)),$(2))),$(1))
_one_safe_word = $(and $(filter 1,$(words $(1))),$(if $(strip $(call _without,$(1),$(_shell_safe))),,1))
q = $(if $(call _one_safe_word,$(1)),$(strip $(1)),'$(subst ','\'',$(1))')
qwords = $(foreach w,$(1),$(call q,$(w)))
# Names (a dataset, a tuner): one word of [A-Za-z0-9._-]; the value is shown by make, never by a shell.
_name_chars := $(_alnum) . _ -
need_name = $(if $(and $(filter 1,$(words $($(1)))),$(if $(strip $(call _without,$($(1)),$(_name_chars))),,1)),,$(error \
	$(2): $(1) must be a name (letters, digits, . _ -), got "$($(1))"))
need_one_of = $(if $(filter-out $(3),$($(1)))$(filter-out 1,$(words $($(1)))),$(error $(2): $(1) must be one of $(3), got "$($(1))"))
# Lower case without a shell (RECIPE_MODEL, mk/grpo.mk).
lc = $(subst Z,z,$(subst Y,y,$(subst X,x,$(subst W,w,$(subst V,v,$(subst U,u,$(subst T,t,$(subst S,s,$(subst R,r,$(subst Q,q,$(subst P,p,$(subst O,o,$(subst N,n,$(subst M,m,$(subst L,l,$(subst K,k,$(subst J,j,$(subst I,i,$(subst H,h,$(subst G,g,$(subst F,f,$(subst E,e,$(subst D,d,$(subst C,c,$(subst B,b,$(subst A,a,$(1)))))))))))))))))))))))))))
# Values are read as given (docs/reliability.md, "Make variables"): make expands a value given on its command line
# wherever it is read, so a $(shell CMD) in it would run CMD, under `make -n` too. read_given_values (called by the
# Makefile before any other makefile is read) re-reads each command-line variable unexpanded ($(value)), $$ standing
# for $ as make reads it, and keeps it exported to the recipes as make exports command-line values; its origin is
# then `override`: $(call given,VAR) says whether the user gave VAR (command line or environment).
_dollar := $$
define _given_one
override $(1) := $$(subst $$(_dollar)$$(_dollar),$$(_dollar),$$(value $(1)))
export $(1)
endef
_var_name_chars := $(_alnum) _
read_given_values = $(foreach v,$(.VARIABLES),$(if $(and $(filter command line,$(origin $(v))),$(if $(strip \
	$(call _without,$(v),$(_var_name_chars))),,1)),$(eval $(call _given_one,$(v)))))
given = $(filter command line environment override,$(origin $(1)))
