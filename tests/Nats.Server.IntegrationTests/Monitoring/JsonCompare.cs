using System.Text.Json;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>Field-by-field comparison of two monitoring documents.</summary>
internal static class JsonCompare
{
    /// <summary>
    /// Both documents have the same keys at every level (arrays: compared element-wise when both are
    /// non-empty, against their first element). Paths in <paramref name="ignored"/> (e.g. "system_account")
    /// may be missing on either side: they are the documented differences.
    /// </summary>
    public static void SameKeys(JsonElement go, JsonElement ours, string path = "", params string[] ignored)
    {
        Assert.True(go.ValueKind == ours.ValueKind || IsNumberPair(go, ours) || IsBoolPair(go, ours),
            $"{path}: go is {go.ValueKind}, ours is {ours.ValueKind}");
        if (go.ValueKind == JsonValueKind.Object)
        {
            var goKeys = go.EnumerateObject().Select(p => p.Name).Where(k => !ignored.Contains(Join(path, k))).ToList();
            var ourKeys = ours.EnumerateObject().Select(p => p.Name).Where(k => !ignored.Contains(Join(path, k))).ToList();
            Assert.True(goKeys.SequenceEqual(ourKeys),
                $"{path}: keys differ (order matters)\n go:   {string.Join(",", goKeys)}\n ours: {string.Join(",", ourKeys)}");
            foreach (var key in goKeys)
            {
                SameKeys(go.GetProperty(key), ours.GetProperty(key), Join(path, key), ignored);
            }
        }
        else if (go.ValueKind == JsonValueKind.Array && go.GetArrayLength() > 0 && ours.GetArrayLength() > 0)
        {
            SameKeys(go[0], ours[0], path + "[]", ignored);
        }
    }

    /// <summary>The values at these top-level (dotted) paths are equal.</summary>
    public static void SameValues(JsonElement go, JsonElement ours, params string[] paths)
    {
        foreach (var path in paths)
        {
            var g = At(go, path);
            var o = At(ours, path);
            Assert.True(g.GetRawText() == o.GetRawText(), $"{path}: go={g.GetRawText()} ours={o.GetRawText()}");
        }
    }

    public static JsonElement At(JsonElement element, string dottedPath)
    {
        foreach (var part in dottedPath.Split('.'))
        {
            element = element.GetProperty(part);
        }
        return element;
    }

    private static string Join(string path, string key) => path.Length == 0 ? key : path + "." + key;

    private static bool IsNumberPair(JsonElement a, JsonElement b) => a.ValueKind == JsonValueKind.Number && b.ValueKind == JsonValueKind.Number;

    private static bool IsBoolPair(JsonElement a, JsonElement b) =>
        a.ValueKind is JsonValueKind.True or JsonValueKind.False && b.ValueKind is JsonValueKind.True or JsonValueKind.False;
}
