namespace Nats.Server.IntegrationTests;

public class SmokeTests
{
    [Fact]
    public void AssemblyLoads() => Assert.NotNull(typeof(SmokeTests).Assembly);
}
