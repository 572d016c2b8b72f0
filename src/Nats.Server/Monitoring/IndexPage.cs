namespace Nats.Server.Monitoring;

/// <summary>The monitoring root page: links to every endpoint, in the Go server's order.</summary>
internal static class IndexPage
{
    private static readonly (string Path, string Title)[] Links =
    [
        ("varz", "General"),
        ("jsz", "JetStream"),
        ("connz", "Connections"),
        ("accountz", "Accounts"),
        ("accstatz", "Account Stats"),
        ("subsz", "Subscriptions"),
        ("routez", "Routes"),
        ("leafz", "LeafNodes"),
        ("gatewayz", "Gateways"),
        ("healthz", "Health Probe"),
    ];

    public static string Render(string version)
    {
        var links = new System.Text.StringBuilder();
        for (var i = 0; i < Links.Length; i++)
        {
            var (path, title) = Links[i];
            var last = i == Links.Length - 1 ? " class=last" : "";
            links.Append("\t<a href=./").Append(path).Append(last).Append('>').Append(title).Append("</a>\n");
        }
        return $$"""
            <html lang="en">
            	<head>
            	<link rel="shortcut icon" href="https://nats.io/favicon.ico">
            	<style type="text/css">
            		body { font-family: ui-sans-serif,system-ui,-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif; font-size: 18; margin-left: 32px }
            		a { display:block; margin-left: 7px; padding-bottom: 6px; color: rgb(72 72 92); text-decoration: none }
            		a:hover { font-weight: 600; color: rgb(59 50 202) }
            		a.help { display:inline; font-weight: 600; color: rgb(59 50 202); font-size: 20}
            		a.last { padding-bottom: 16px }
            		a.version { font-size: 14; font-weight: 400; text-align: left }
            	</style>
            	</head>
            	<body>
            	<h1>NATS</h1>
            	<a href=https://github.com/nats-io/nats-server class='version'>v{{version}}</a>
            	<br/>
            {{links}}    <a href=https://docs.nats.io/running-a-nats-service/nats_admin/monitoring class="help">Help</a>
              </body>
            </html>
            """;
    }
}
