using System.Text;

namespace Nats.Server.Mqtt;

/// <summary>
/// Topic ↔ subject mapping exactly as Go 2.9.10 (mqttToNATSSubjectConversion / natsSubjectToMQTTTopic):
/// '/' becomes '.', an empty level is kept with a '/' so it round-trips ("/a" → "/.a", "a//b" → "a./.b",
/// "a/" → "a./"), '+' becomes '*', '#' becomes '>', and '.' or ' ' in a topic are refused.
/// </summary>
internal static class MqttTopics
{
    public const string UnsupportedCharacters = "characters ' ' and '.' not supported for MQTT topics";

    /// <summary>Converts a topic (wildcards refused) or a filter; returns null and an error text when refused.</summary>
    public static string? ToSubject(ReadOnlySpan<byte> topic, bool wildcardsAllowed, out string? error)
    {
        error = null;
        var result = new StringBuilder(topic.Length + 4);
        var end = topic.Length - 1;
        var converted = false;
        for (var i = 0; i < topic.Length; i++)
        {
            var b = topic[i];
            switch (b)
            {
                case (byte)'/':
                    converted = true;
                    if (i == 0 || result[^1] == '.')
                    {
                        result.Append("/.");
                    }
                    else if (i == end || topic[i + 1] == '/')
                    {
                        result.Append("./");
                    }
                    else
                    {
                        result.Append('.');
                    }
                    break;
                case (byte)'.' or (byte)' ':
                    error = UnsupportedCharacters;
                    return null;
                case (byte)'+' or (byte)'#':
                    if (!wildcardsAllowed)
                    {
                        error = $"wildcards not allowed in publish's topic: {Auth.GoQuote.Quote(topic.ToArray())}";
                        return null;
                    }
                    converted = true;
                    result.Append(b == (byte)'+' ? '*' : '>');
                    break;
                default:
                    result.Append((char)b);
                    break;
            }
        }
        if (converted && result.Length > 0 && result[^1] == '.')
        {
            result.Append('/');
        }
        // Bytes above 0x7f were appended one per char; restore them as UTF-8.
        return Encoding.Latin1.GetBytes(result.ToString()) is var raw ? Encoding.UTF8.GetString(raw) : null;
    }

    /// <summary>
    /// The publish-path form of <see cref="ToSubject"/>: writes the subject into <paramref name="destination"/>
    /// (at least twice the topic's length plus one) without allocating; -1 and an error text when refused.
    /// </summary>
    public static int ToSubjectBytes(ReadOnlySpan<byte> topic, Span<byte> destination, out string? error)
    {
        error = null;
        var end = topic.Length - 1;
        var j = 0;
        var converted = false;
        for (var i = 0; i < topic.Length; i++)
        {
            var b = topic[i];
            switch (b)
            {
                case (byte)'/':
                    converted = true;
                    if (i == 0 || destination[j - 1] == (byte)'.')
                    {
                        destination[j++] = (byte)'/';
                        destination[j++] = (byte)'.';
                    }
                    else if (i == end || topic[i + 1] == (byte)'/')
                    {
                        destination[j++] = (byte)'.';
                        destination[j++] = (byte)'/';
                    }
                    else
                    {
                        destination[j++] = (byte)'.';
                    }
                    break;
                case (byte)'.' or (byte)' ':
                    error = UnsupportedCharacters;
                    return -1;
                case (byte)'+' or (byte)'#':
                    error = $"wildcards not allowed in publish's topic: {Auth.GoQuote.Quote(topic.ToArray())}";
                    return -1;
                default:
                    destination[j++] = b;
                    break;
            }
        }
        if (converted && j > 0 && destination[j - 1] == (byte)'.')
        {
            destination[j++] = (byte)'/';
        }
        return j;
    }

    /// <summary>The reverse mapping for delivery to MQTT subscribers, written into <paramref name="destination"/>; returns the length.</summary>
    public static int ToTopic(ReadOnlySpan<byte> subject, Span<byte> destination)
    {
        var end = subject.Length - 1;
        var j = 0;
        for (var i = 0; i < subject.Length; i++)
        {
            switch (subject[i])
            {
                case (byte)'/':
                    if (!(i == 0 && i < end && subject[i + 1] == (byte)'.'))
                    {
                        destination[j++] = (byte)'/';
                    }
                    break;
                case (byte)'.':
                    destination[j++] = (byte)'/';
                    if (i < end && subject[i + 1] == (byte)'/')
                    {
                        i++;
                    }
                    break;
                default:
                    destination[j++] = subject[i];
                    break;
            }
        }
        return j;
    }

    /// <summary>Go's mqttNeedSubForLevelUp: "a.>" also subscribes "a" so "a/#" matches "a".</summary>
    public static bool NeedsLevelUp(string subject) => subject.Length >= 3 && subject[^2] == '.' && subject[^1] == '>';
}
