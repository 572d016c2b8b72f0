using System.Text;
using Nats.Server.Hosting;

namespace Nats.Server.Tests.Hosting;

public sealed class ResidentMemoryTests
{
    [Fact]
    public void ParsesTheResidentFieldOfStatm()
    {
        Assert.True(ResidentMemory.TryParseStatm("1048592 4321 2100 1300 0 81234 0\n"u8, out var pages));
        Assert.Equal(4321, pages);
        Assert.False(ResidentMemory.TryParseStatm("1048592"u8, out _));
        Assert.False(ResidentMemory.TryParseStatm(""u8, out _));
    }

    [Fact]
    public void AgreesWithTheFrameworksWorkingSet()
    {
        // Both read the kernel's resident set; they are sampled at different moments, so only the scale is compared.
        var ours = ResidentMemory.Bytes();
        var framework = Environment.WorkingSet;
        Assert.InRange(ours, framework / 2, framework * 2);
    }
}
