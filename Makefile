# The two set-up commands a newcomer needs (see README): `make demo` and `make test`.
# Both build with every package trait (the tool, the server products, the benchmarks): an app that depends
# on Stash builds none of them, see Package.swift.
.PHONY: deps demo test sanitize lint app-graph apple-platforms

deps:
	@scripts/install-deps

demo: deps
	swift run --enable-all-traits stash demo

# The PostgreSQL shared-tier tests need a server: scripts/postgres starts a private one for the run.
test: deps
	scripts/postgres run -- swift test --enable-all-traits --no-parallel

# The same suite under AddressSanitizer, then ThreadSanitizer (scripts/sanitize; builds in .build-asan, .build-tsan).
sanitize: deps
	scripts/sanitize address
	scripts/sanitize thread

# Fails when an app that depends on Stash + StashHTTP resolves more than swift-log.
app-graph:
	scripts/check-app-graph

# Fails on code that breaks an Apple build although Linux compiles it (see README, "Apple platforms").
apple-platforms:
	scripts/check-apple-platforms

lint:
	swift format lint --strict --recursive Sources Tests
