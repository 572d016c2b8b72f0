namespace Nats.Server.Tests;

public class SmokeTests
{
    [Fact]
    public void AssemblyLoads() => Assert.NotNull(typeof(SmokeTests).Assembly);
}
