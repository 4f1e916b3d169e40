# The two set-up commands a newcomer needs (see README): `make demo` and `make test`.
.PHONY: deps demo test lint

deps:
	@scripts/install-deps

demo: deps
	swift run stash demo

test: deps
	swift test --no-parallel

lint:
	swift format lint --strict --recursive Sources Tests
