// A stand-in for the `undici` package, used by Benchmarks/conformance/run.sh when the
// conformance suite's client cannot install the real one (no npm registry).
//
// The suite's client needs `new Agent().compose(interceptor)` to collect interim (1xx)
// responses: its interceptor wraps the request's handler in one that records every head
// below 200 from `onResponseStart` (undici 7's handler interface). Node's built-in fetch
// runs on the undici bundled with Node (its global dispatcher), which still calls the older
// `onHeaders(status, rawHeaders, resume, statusText)`, for 1xx heads as well as the final one.
// This stand-in dispatches on that global dispatcher and hands each head to the suite's
// interceptor as `onResponseStart`, while fetch's own handler receives every callback as
// before. Nothing is invented: a 1xx is recorded only when the proxy sent it on the wire.

const globalDispatcherKey = Symbol.for('undici.globalDispatcher.1')

function bundledDispatcher () {
  const dispatcher = globalThis[globalDispatcherKey]
  if (dispatcher == null) {
    throw new Error('undici stand-in: Node has no global fetch dispatcher yet (it is created by the first fetch)')
  }
  return dispatcher
}

// rawHeaders: [name, value, name, value, ...] as Buffers or strings -> { lowercased: value }
function headerObject (rawHeaders) {
  const headers = {}
  for (let i = 0; i + 1 < (rawHeaders?.length ?? 0); i += 2) {
    const name = rawHeaders[i].toString('latin1').toLowerCase()
    const value = rawHeaders[i + 1].toString('latin1')
    if (name in headers) {
      headers[name] = Array.isArray(headers[name]) ? [...headers[name], value] : [headers[name], value]
    } else {
      headers[name] = value
    }
  }
  return headers
}

// The handler given to Node's dispatcher: every callback goes to fetch's handler; heads also
// go to the interceptors' handler (`observer`) as `onResponseStart`.
function bridge (fetchHandler, observer) {
  const forward = (name) => (...args) => fetchHandler[name]?.(...args)
  let controller = null
  return {
    onConnect (abort, context) {
      controller = { abort, pause () {}, resume () {}, paused: false, aborted: false }
      return fetchHandler.onConnect?.(abort, context)
    },
    onHeaders (statusCode, rawHeaders, resume, statusText) {
      observer.onResponseStart?.(controller, statusCode, headerObject(rawHeaders), statusText)
      return fetchHandler.onHeaders?.(statusCode, rawHeaders, resume, statusText)
    },
    onData: forward('onData'),
    onComplete: forward('onComplete'),
    onError: forward('onError'),
    onUpgrade: forward('onUpgrade'),
    onBodySent: forward('onBodySent'),
    onRequestSent: forward('onRequestSent'),
    onResponseStarted: forward('onResponseStarted')
  }
}

class ComposedDispatcher {
  constructor (interceptors) {
    this.interceptors = interceptors
  }

  dispatch (options, fetchHandler) {
    // The innermost dispatch receives the handler the interceptors built around
    // `fetchHandler`; it observes the exchange while fetch's handler drives it.
    let dispatch = (innerOptions, observer) => bundledDispatcher().dispatch(innerOptions, bridge(fetchHandler, observer))
    for (const interceptor of [...this.interceptors].reverse()) dispatch = interceptor(dispatch)
    return dispatch(options, {})
  }

  close () { return Promise.resolve() }
  destroy () { return Promise.resolve() }
}

export class Agent {
  compose (...interceptors) {
    return new ComposedDispatcher(interceptors.flat())
  }
}

export default { Agent }
