# The documentation site (mkdocs with the material theme, pinned in requirements/rl.in): docs/*.md + mkdocs.yml ->
# outputs/site/. --strict turns every warning (a broken link or anchor, a page missing from the nav) into a failure.
.PHONY: docs
docs: $(VENVS)/rl/.ready
	NO_MKDOCS_2_WARNING=1 $(RL)/mkdocs build --strict
