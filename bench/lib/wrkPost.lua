-- wrk script for bench/wrk.ts: every request POSTs the JSON-RPC body in WRK_BODY.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("WRK_BODY")
