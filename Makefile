# The two set-up commands a newcomer needs (see README): `make demo` and `make test`.
.PHONY: deps demo test lint

deps:
	@scripts/install-deps

demo: deps
	swift run stash demo

# The PostgreSQL shared-tier tests need a server: scripts/postgres starts a private one for the run.
test: deps
	scripts/postgres run -- swift test --no-parallel

lint:
	swift format lint --strict --recursive Sources Tests
