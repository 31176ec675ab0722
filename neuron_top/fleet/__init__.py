"""The fleet view's headless core: many Neuron hosts, read from Prometheus or over ssh (no UI imports).

* ``promql``: the HTTP query client (timeouts, retries, bearer/basic auth, a CA file, GET or POST, extra headers and
  parameters, the server's warnings); ``sigv4``: AWS SigV4 (Amazon Managed Prometheus, CloudWatch), an ``Auth``
  built on botocore (the optional extra ``aws``).
* ``queries``: the fixed set of server-side aggregated queries (``by (instance_id)`` or ``--by``).
* ``rows``: one ``FleetRow`` per host, from Prometheus answers or from a host's snapshots.
* ``table``: columns, sort, filter, group, trouble and the summary line (shared by the screen and ``--once``).
* ``prom``: the Prometheus poller (back-off, stale data kept); ``host_source``: one host's dashboard from
  Prometheus; ``ssh``: one restarting stream per host; ``sessions``: the ssh hosts' sessions as rows.
* ``frame``/``record``: one refresh as a ``FleetFrame``, recorded one JSON line per refresh and replayed.

Nothing here imports another ``neuron_top.fleet`` module on import of the package, so importing one part is cheap.
"""
