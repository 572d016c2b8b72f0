namespace Nats.Server.Configuration;

/// <summary>The -h text, laid out like nats-server's usage and listing only what we implement.</summary>
internal static class UsageText
{
    public const string Text = """

        Usage: nats-net-server [options]

        Server Options:
            -a, --addr, --net <host>         Bind to host address (default: 0.0.0.0)
            -p, --port <port>                Use port for clients (default: 4222; -1 or 0 for a random port)
            -n, --name
                --server_name <server_name>  Server name (default: auto)
            -P, --pid <file>                 File to store PID
            -m, --http_port <port>           Use port for http monitoring
            -c, --config <file>              Configuration file
            -t                               Test configuration and exit
            -sl,--signal <signal>[=<pid>]    Send signal to nats-net-server process (ldm, stop, quit, term, reopen, reload)
                                             pid can be either a PID (e.g. 1) or the path to a PID file (e.g. /var/run/nats-server.pid)
                --client_advertise <string>  Client URL to advertise to other servers
                --ports_file_dir <dir>       Creates a ports file in the specified directory (<executable_name>_<pid>.ports).

        Logging Options:
            -l, --log <file>                 File to redirect log output
            -T, --logtime                    Timestamp log entries (default: true)
                --logtime_utc                Timestamps in UTC instead of local time
            -D, --debug                      Enable debugging output
            -V, --trace                      Trace the raw protocol
            -VV                              Verbose trace (traces system account as well)
            -DV                              Debug and trace
            -DVV                             Debug and verbose trace (traces system account as well)
                --log_size_limit <limit>     Logfile size limit (default: auto)
                --max_traced_msg_len <len>   Maximum printable length for traced messages (default: unlimited)

        Authorization Options:
                --user <user>                User required for connections
                --pass <password>            Password required for connections
                --auth <token>               Authorization token required for connections

        Common Options:
            -h, --help                       Show this message
            -v, --version                    Show version

        """;
}
