using System.Text;
using Nats.Server.IntegrationTests.Infrastructure;

namespace Nats.Server.IntegrationTests.Differential;

/// <summary>Plays a script against one server and returns each connection's normalised transcript.</summary>
internal static class ScriptRunner
{
    public static async Task<Transcripts> RunAsync(ProtocolScript script, int port)
    {
        var connections = new Dictionary<string, ScriptConnection>(StringComparer.Ordinal);
        var order = new List<string>();
        try
        {
            foreach (var step in script.Steps)
            {
                if (step.Kind is StepKind.Connect or StepKind.Alive)
                {
                    if (connections.ContainsKey(step.Connection))
                    {
                        throw new FormatException($"{script.Name}:{step.LineNumber}: connection {step.Connection} opened twice");
                    }

                    var c = new ScriptConnection(script.KeepPings, !script.NoAutoPong);
                    connections[step.Connection] = c;
                    order.Add(step.Connection);
                    await c.ConnectAsync(port);
                    if (step.Kind == StepKind.Alive)
                    {
                        await c.SendAsync(AliveProbe(script.Server), oneBytePerWrite: false);
                        await c.SyncAsync();
                        c.CloseByClient();
                    }

                    continue;
                }

                if (!connections.TryGetValue(step.Connection, out var conn))
                {
                    throw new FormatException($"{script.Name}:{step.LineNumber}: connection {step.Connection} used before 'conn'");
                }

                switch (step.Kind)
                {
                    case StepKind.Send: await conn.SendAsync(step.Payload, oneBytePerWrite: false); break;
                    case StepKind.SendSplit: await conn.SendAsync(step.Payload, oneBytePerWrite: true); break;
                    case StepKind.Sync: await conn.SyncAsync(); break;
                    case StepKind.ExpectClosed: await conn.ExpectClosedAsync(); break;
                    case StepKind.Close: conn.CloseByClient(); break;
                    case StepKind.Reply: await conn.ReplyAsync(step.Payload); break;
                }
            }

            var result = new Transcripts();
            foreach (var name in order)
            {
                result.Add(name, connections[name].Transcript);
            }

            result.MergeUnordered(script.UnorderedGroups);
            return result;
        }
        finally
        {
            foreach (var c in connections.Values)
            {
                await c.DisposeAsync();
            }
        }
    }

    /// <summary>A fresh, correctly authenticated client doing a round trip: proves the server still serves others.</summary>
    private static byte[] AliveProbe(ServerSettings server)
    {
        var connect = new StringBuilder("{\"verbose\":false");
        if (server.User is not null)
        {
            connect.Append(",\"user\":\"").Append(server.User).Append("\",\"pass\":\"").Append(server.Password).Append('"');
        }

        if (server.Token is not null)
        {
            connect.Append(",\"auth_token\":\"").Append(server.Token).Append('"');
        }

        connect.Append('}');
        return Encoding.ASCII.GetBytes($"CONNECT {connect}\r\nSUB alive.check 1\r\nPUB alive.check 5\r\nalive\r\n");
    }
}
