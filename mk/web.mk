# MiniWoB++ in Chromium (docs/miniwob.md): the browser from Debian, miniwob + selenium into .venvs/rl.
#   make setup-web    installs Debian's chromium + chromium-driver when missing (root only; otherwise it prints the
#                     command to run), then requirements/web.in into .venvs/rl constrained by requirements/rl.lock.txt
#                     and requirements/web.lock.txt, and checks that chromium and chromedriver have the same major
#                     version. `make setup` never installs system packages; CI (.ci/run) runs this before `make test`.
#                     CHROMIUM / CHROMEDRIVER (paths) reach the shell quoted ($(call q,...), mk/shell.mk).
#: make setup-web: the Chromium binary MiniWoB++ drives.
CHROMIUM ?= /usr/bin/chromium
#: make setup-web: the chromedriver binary (its major version must match Chromium's).
CHROMEDRIVER ?= /usr/bin/chromedriver
_WEB_PIP = -c requirements/rl.lock.txt -c requirements/web.lock.txt -r requirements/web.in

.PHONY: setup-web bench-miniwob

setup-web: $(VENVS)/rl/.ready
	@if [ ! -x $(call q,$(CHROMIUM)) ] || [ ! -x $(call q,$(CHROMEDRIVER)) ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "setup-web: installing Debian's chromium and chromium-driver"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
	  else \
	    echo "setup-web:" $(call q,$(CHROMIUM)) "or" $(call q,$(CHROMEDRIVER)) "is missing and installing them needs root; run:" >&2; \
	    echo "  sudo apt-get update && sudo apt-get install -y chromium chromium-driver" >&2; \
	    echo "then make setup-web again" >&2; exit 2; \
	  fi; \
	fi
	$(RL)/pip install -q --disable-pip-version-check $(_WEB_PIP)
	@browser=$$($(call q,$(CHROMIUM)) --version 2>/dev/null | grep -oE '[0-9]+\.[0-9.]+' | head -1); \
	driver=$$($(call q,$(CHROMEDRIVER)) --version 2>/dev/null | grep -oE '[0-9]+\.[0-9.]+' | head -1); \
	if [ -z "$$browser" ] || [ -z "$$driver" ] || [ "$${browser%%.*}" != "$${driver%%.*}" ]; then \
	  echo "setup-web: chromium '$$browser' and chromedriver '$$driver' do not share a major version;" \
	    "reinstall both from one source: apt-get install -y chromium chromium-driver" >&2; exit 2; \
	fi; \
	echo "setup-web: chromium $$browser and chromedriver $$driver match (major $${browser%%.*});" \
	  "$$($(RL)/python -c 'import importlib.metadata as m; print(*(p + " " + m.version(p) for p in ("miniwob", "selenium", "gymnasium")), sep=", ")') in $(VENVS)/rl"

bench-miniwob: $(VENVS)/rl/.ready
	$(RL)/python bench/miniwob.py $(call qwords,$(BENCH_ARGS))
