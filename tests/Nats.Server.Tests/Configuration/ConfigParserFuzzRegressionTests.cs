using Nats.Server.Configuration;

namespace Nats.Server.Tests.Configuration;

/// <summary>
/// Inputs the config fuzz target (fuzz/Nats.Fuzz, ConfigTarget) found. Go's lexer uses rune 0 as its end-of-input
/// marker, so a NUL byte reads as the end wherever it stands; ours passed it into an include path, where the file
/// API threw an ArgumentException that no configuration error caught (the server died with an unhandled exception).
/// Go's errors print that end marker as a NUL byte, at a NUL and at the real end alike.
/// </summary>
public class ConfigParserFuzzRegressionTests
{
    public static TheoryData<string, string> NulCases() => new()
    {
        { "nul-in-quoted-include", "port: 4222\ninclude \"a\0b.conf\"\n" },
        { "nul-in-bare-include", "port: 4222\ninclude a\0b.conf\n" },
        { "nul-after-value", "port: 4222\0 garbage {{{\n" },
        { "nul-in-key", "po\0rt: 4222\n" },
        { "nul-in-quoted-value", "server_name: \"a\0b\"\n" },
        { "nul-in-block", "authorization {\n user: a\0\n password: b\n}\n" },
        { "eof-inside-map", "a { b: 1" },
    };

    [Theory]
    [MemberData(nameof(NulCases))]
    public async Task NulByte_EndsTheInputAsInTheGoServer(string name, string text)
    {
        using var dir = new TempDirectory();
        var file = dir.Write(name + ".conf", text);

        var (goAccepts, goOutput) = await GoConfigCheck.RunAsync(file);
        var ours = GoConfigCheck.OurRefusal(file);

        Assert.True(goAccepts == (ours is null), $"{name}: Go accepts={goAccepts} ({goOutput}), we accept={ours is null} ({ours})");
        if (!goAccepts)
        {
            // Go prints "nats-server: <error>"; ours names the file first (a difference of every parse error, not of these).
            Assert.EndsWith(goOutput.Trim().Split('\n')[0].Replace("nats-server: ", ""), ours);
        }
    }

    [Fact]
    public void NulByteInAnIncludePath_IsAConfigurationError()
    {
        using var dir = new TempDirectory();
        var error = Assert.Throws<ConfigurationException>(() => ConfigParser.Parse("include \"a\0b.conf\"\n", Path.Combine(dir.Path, "main.conf")));
        Assert.Contains("Unexpected EOF in double quoted include", error.Message);
    }
}
