using System.Globalization;
using Microsoft.AspNetCore.Http;

namespace Nats.Server.Monitoring;

/// <summary>
/// Query parameters decoded with the Go server's rules (strconv.ParseBool/Atoi/ParseUint) and its
/// exact 400 texts, e.g. "Error decoding boolean for 'subs': strconv.ParseBool: parsing "x": invalid syntax".
/// </summary>
internal readonly struct QueryDecoder(IQueryCollection query)
{
    public string Get(string name) => query.TryGetValue(name, out var values) && values.Count > 0 ? values[0] ?? "" : "";

    public bool TryBool(string name, out bool value, out string error)
    {
        value = false;
        error = "";
        var text = Get(name);
        switch (text)
        {
            case "":
                return true;
            case "1" or "t" or "T" or "true" or "TRUE" or "True":
                value = true;
                return true;
            case "0" or "f" or "F" or "false" or "FALSE" or "False":
                return true;
            default:
                error = $"Error decoding boolean for '{name}': strconv.ParseBool: parsing \"{text}\": invalid syntax";
                return false;
        }
    }

    public bool TryInt(string name, out int value, out string error)
    {
        value = 0;
        error = "";
        var text = Get(name);
        if (text.Length == 0)
        {
            return true;
        }
        if (IsGoInteger(text, allowSign: true))
        {
            if (int.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out value))
            {
                return true;
            }
            error = $"Error decoding int for '{name}': strconv.Atoi: parsing \"{text}\": value out of range";
            return false;
        }
        error = $"Error decoding int for '{name}': strconv.Atoi: parsing \"{text}\": invalid syntax";
        return false;
    }

    public bool TryUInt64(string name, out ulong value, out string error)
    {
        value = 0;
        error = "";
        var text = Get(name);
        if (text.Length == 0)
        {
            return true;
        }
        if (IsGoInteger(text, allowSign: false))
        {
            if (ulong.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value))
            {
                return true;
            }
            error = $"Error decoding uint64 for '{name}': strconv.ParseUint: parsing \"{text}\": value out of range";
            return false;
        }
        error = $"Error decoding uint64 for '{name}': strconv.ParseUint: parsing \"{text}\": invalid syntax";
        return false;
    }

    private static bool IsGoInteger(string text, bool allowSign)
    {
        var start = allowSign && (text[0] == '-' || text[0] == '+') ? 1 : 0;
        if (start == text.Length)
        {
            return false;
        }
        for (var i = start; i < text.Length; i++)
        {
            if (text[i] is < '0' or > '9')
            {
                return false;
            }
        }
        return true;
    }
}
