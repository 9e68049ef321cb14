import Foundation

/// nginx serving a folder over TLS and HTTP/2 on 127.0.0.1, with a certificate from a throwaway CA
/// made by the `openssl` command; its access log records the protocol and connection of each
/// request. nginx-light and openssl come from scripts/setup.sh.
public final class TestTLSServer: @unchecked Sendable {
    /// The port.
    public let port: Int
    /// The CA certificate (PEM) that signed the server's certificate.
    public let certificateAuthority: String
    /// The folder served.
    public let root: String
    private let folder: TemporaryFolder
    private let pidFile: String
    private let logFile: String

    /// Starts nginx; throws when nginx or openssl is missing or fails.
    public init() throws {
        folder = TemporaryFolder()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        root = folder.file("www")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let nginx else { throw TestServerError("nginx is missing: run ./scripts/test.sh, which installs nginx-light") }
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else { throw TestServerError("openssl is missing") }
        certificateAuthority = folder.file("ca.pem")
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=imgpolicy test CA",
             "-keyout", folder.file("ca.key"), "-out", certificateAuthority],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", folder.file("server.key"), "-out", folder.file("server.csr")],
        ]
        for step in steps { try Self.run(openssl, step) }
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: folder.file("san.ext"), atomically: true, encoding: .utf8)
        try Self.run(openssl, ["x509", "-req", "-in", folder.file("server.csr"), "-CA", certificateAuthority,
                               "-CAkey", folder.file("ca.key"), "-CAcreateserial", "-days", "2",
                               "-extfile", folder.file("san.ext"), "-out", folder.file("server.pem")])
        port = try Self.freePort()
        pidFile = folder.file("nginx.pid")
        logFile = folder.file("access.log")
        let configuration = """
            worker_processes 1;
            daemon on;
            pid \(pidFile);
            error_log \(folder.file("error.log")) warn;
            events { worker_connections 256; }
            http {
                log_format proto '$server_protocol $connection $uri';
                access_log \(logFile) proto;
                client_body_temp_path \(folder.file("body"));
                types { image/png png; }
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(folder.file("server.pem"));
                    ssl_certificate_key \(folder.file("server.key"));
                    root \(root);
                }
            }
            """
        try configuration.write(toFile: folder.file("nginx.conf"), atomically: true, encoding: .utf8)
        // nginx daemonises: start it with its standard streams on /dev/null and wait for the
        // parent to exit, so that no pipe of ours is held open by the daemon.
        let status = Self.spawnDetached(nginx, ["-c", folder.file("nginx.conf"), "-p", folder.path])
        guard status == 0 else {
            let log = (try? String(contentsOfFile: folder.file("error.log"), encoding: .utf8)) ?? ""
            throw TestServerError("nginx exited with \(status): \(log)")
        }
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: pidFile) { Thread.sleep(forTimeInterval: 0.02) }
    }

    deinit { stop() }

    /// `https://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    /// Writes a file to serve.
    public func serve(_ bytes: [UInt8], at path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: root + path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root + path)
    }

    /// The access log's lines: `protocol connection uri`. nginx writes them as requests finish.
    public func log() -> [String] {
        ((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Stops nginx (also done when the value is released; call it at the end of a test, since a
    /// test framework may keep values alive until the process exits).
    public func stop() {
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGTERM)
            try? FileManager.default.removeItem(atPath: pidFile)
        }
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let result = try ProcessResult.run(executable, arguments)
        guard result.status == 0 else {
            throw TestServerError("\(executable) \(arguments.first ?? "") failed: \(result.stderr)")
        }
    }

    /// Runs `executable` with /dev/null as its standard streams and no other descriptor of ours
    /// (a daemon that kept one would hold another test's pipe open), and returns its exit status.
    private static func spawnDetached(_ executable: String, _ arguments: [String]) -> Int32 {
        guard let pid = try? ChildSpawn.spawn(executable, arguments) else { return -1 }
        return ChildSpawn.wait(pid).status
    }

    private static func freePort() throws -> Int {
        // A listener on port 0 gets a free port; it is closed so that nginx can take it.
        let probe = try TestHTTPServer()
        defer { probe.stop() }
        return probe.port
    }
}

/// A test server could not start.
public struct TestServerError: Error, CustomStringConvertible {
    /// What failed.
    public var description: String

    init(_ description: String) { self.description = description }
}
