using System.Text;
using Nats.Server.Accounts;

namespace Nats.Server.Tests.Accounts;

public class ImportTransformTests
{
    [Theory]
    [InlineData("news.*", "local.*", "news.sport", "local.sport")]
    [InlineData("a.*.b.*", "x.*.*", "a.1.b.2", "x.1.2")]
    [InlineData("news.>", "pre.news.>", "news.sport.today", "pre.news.sport.today")]
    [InlineData("svc.*.>", "remote.*.>", "svc.add.x.y", "remote.add.x.y")]
    [InlineData("alerts.*.high", "high.*", "alerts.cpu.high", "high.cpu")]
    public void MapsWildcardTokensInOrder(string from, string to, string subject, string expected)
    {
        var transform = ImportTransform.Create(from, to, out var error);
        Assert.Null(error);
        Assert.Equal(expected, transform!.Apply(subject));
    }

    [Theory]
    [InlineData("news.*", "local", false, "invalid mapping destination: not using all of the token wildcard(s) in local")]
    [InlineData("news.*", "local.*.*", false, "invalid mapping destination: wildcard index out of range in $2: [2]")]
    [InlineData("news.>", "local", false, "invalid subject")]
    // Service imports check the exporter's side against the local one (Go builds the reverse transform).
    [InlineData("l", "svc.*", true, "invalid mapping destination: not using all of the token wildcard(s) in l")]
    [InlineData("l.*.*", "svc.*", true, "invalid mapping destination: wildcard index out of range in $2: [2]")]
    public void RefusesWithGoReasons(string from, string to, bool reverse, string expected)
    {
        Assert.Null(ImportTransform.Create(from, to, out var error, reverse));
        Assert.Equal(expected, error);
    }
}
