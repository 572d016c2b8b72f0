using System.Text.Json;

namespace Nats.Server.IntegrationTests.Monitoring;

/// <summary>Field-by-field comparison of two monitoring documents.</summary>
internal static class JsonCompare
{
    /// <summary>
    /// Both documents have the same keys at every level (arrays of objects: the same distinct
    /// key layouts on both sides). Paths in <paramref name="ignored"/> (e.g. "system_account")
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
            // Element order can differ (Go iterates maps) and optional keys vary per element: the
            // distinct key layouts must be the same on both sides; elements with the same layout are compared in depth.
            if (go[0].ValueKind == JsonValueKind.Object)
            {
                var goLayouts = go.EnumerateArray().GroupBy(Layout).ToDictionary(g => g.Key, g => g.First());
                var ourLayouts = ours.EnumerateArray().GroupBy(Layout).ToDictionary(g => g.Key, g => g.First());
                Assert.True(goLayouts.Keys.ToHashSet().SetEquals(ourLayouts.Keys),
                    $"{path}[]: key layouts differ\n go:   {string.Join(" | ", goLayouts.Keys.Order())}\n ours: {string.Join(" | ", ourLayouts.Keys.Order())}");
                foreach (var (layout, goElement) in goLayouts)
                {
                    SameKeys(goElement, ourLayouts[layout], path + "[]", ignored);
                }
            }
            else
            {
                SameKeys(go[0], ours[0], path + "[]", ignored);
            }
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

    private static string Layout(JsonElement element) => string.Join(",", element.EnumerateObject().Select(p => p.Name));

    private static string Join(string path, string key) => path.Length == 0 ? key : path + "." + key;

    private static bool IsNumberPair(JsonElement a, JsonElement b) => a.ValueKind == JsonValueKind.Number && b.ValueKind == JsonValueKind.Number;

    private static bool IsBoolPair(JsonElement a, JsonElement b) =>
        a.ValueKind is JsonValueKind.True or JsonValueKind.False && b.ValueKind is JsonValueKind.True or JsonValueKind.False;
}
