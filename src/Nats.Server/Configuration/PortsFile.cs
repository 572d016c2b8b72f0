using System.Net;
using System.Net.NetworkInformation;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace Nats.Server.Configuration;

/// <summary>
/// The "--ports_file_dir" file: "&lt;exe&gt;_&lt;pid&gt;.ports" holding JSON such as
/// {"nats":["nats://127.0.0.1:4222"],"monitoring":["http://127.0.0.1:8222"]}, which test harnesses
/// read to find a server started on random ports. An unspecified host (0.0.0.0 or ::) lists every
/// interface address, as the Go server does.
/// </summary>
internal static class PortsFile
{
    public static string PathFor(string directory, string executableName, int processId) =>
        System.IO.Path.Combine(directory, $"{executableName}_{processId}.ports");

    /// <summary>The JSON document for a client port and an optional monitoring port (0 = none).</summary>
    public static string Format(string host, int clientPort, string? httpHost, int httpPort)
    {
        var doc = new Dictionary<string, List<string>>
        {
            ["nats"] = Urls("nats", host, clientPort),
        };
        if (httpPort > 0)
        {
            doc["monitoring"] = Urls("http", string.IsNullOrEmpty(httpHost) ? host : httpHost, httpPort);
        }
        return JsonSerializer.Serialize(doc, PortsFileJson.Default.DictionaryStringListString);
    }

    /// <summary>Writes the file and returns its path.</summary>
    public static string Write(string directory, string executableName, int processId, string host, int clientPort, string? httpHost, int httpPort)
    {
        string path = PathFor(directory, executableName, processId);
        File.WriteAllText(path, Format(host, clientPort, httpHost, httpPort));
        return path;
    }

    private static List<string> Urls(string scheme, string host, int port)
    {
        var hosts = new List<string>();
        if (string.IsNullOrEmpty(host) || (IPAddress.TryParse(host, out var ip) && (ip.Equals(IPAddress.Any) || ip.Equals(IPAddress.IPv6Any))))
        {
            foreach (var nic in NetworkInterface.GetAllNetworkInterfaces())
            {
                foreach (var address in nic.GetIPProperties().UnicastAddresses)
                {
                    hosts.Add(address.Address.ToString().Split('%')[0]);
                }
            }
        }
        else
        {
            hosts.Add(host);
        }
        return hosts.Select(h => $"{scheme}://{(h.Contains(':') ? $"[{h}]" : h)}:{port}").ToList();
    }
}

/// <summary>Source-generated serializer for the ports document, so the executable needs no reflection (Native AOT).</summary>
[JsonSerializable(typeof(Dictionary<string, List<string>>))]
internal sealed partial class PortsFileJson : JsonSerializerContext;
