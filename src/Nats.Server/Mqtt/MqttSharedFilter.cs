using System.Text;

namespace Nats.Server.Mqtt;

/// <summary>
/// MQTT 5 shared subscriptions, <c>$share/&lt;group&gt;/&lt;filter&gt;</c> (specification 4.8.2): each is a NATS
/// queue subscription in queue group <c>&lt;group&gt;</c>, so MQTT members and NATS queue subscribers of that group
/// share the messages.
/// </summary>
internal static class MqttSharedFilter
{
    public const string Prefix = "$share/";

    /// <summary>
    /// Whether <paramref name="topic"/> is a shared filter; <paramref name="group"/> is null when it is one but
    /// invalid (an empty group or one with a wildcard or whitespace, no filter after it).
    /// </summary>
    public static bool TryParse(ReadOnlySpan<byte> topic, out string? group, out ReadOnlySpan<byte> filter)
    {
        group = null;
        filter = default;
        if (!topic.StartsWith("$share/"u8))
        {
            return false;
        }
        var rest = topic[7..];
        var slash = rest.IndexOf((byte)'/');
        if (slash <= 0 || slash == rest.Length - 1 || rest[..slash].IndexOfAny("+# \t"u8) >= 0)
        {
            return true;
        }
        group = Encoding.UTF8.GetString(rest[..slash]);
        filter = rest[(slash + 1)..];
        return true;
    }

    /// <summary>A session key "$share/&lt;group&gt;/&lt;subject&gt;" (as a restored session holds it) split back.</summary>
    public static bool TryParse(string sid, out string? group, out string subject)
    {
        group = null;
        subject = sid;
        if (!sid.StartsWith(Prefix, StringComparison.Ordinal))
        {
            return false;
        }
        var slash = sid.IndexOf('/', Prefix.Length);
        if (slash < 0)
        {
            return false;
        }
        group = sid[Prefix.Length..slash];
        subject = sid[(slash + 1)..];
        return true;
    }
}
