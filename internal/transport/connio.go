package transport

import "time"

// A trackedConn's reads and deadlines: each deadline is kept until a read
// or write uses it (lazyDeadline).

func (c *trackedConn) SetReadDeadline(t time.Time) error {
	return c.rd.set(t, c.Conn, false)
}

func (c *trackedConn) SetWriteDeadline(t time.Time) error {
	return c.wd.set(t, c.Conn, true)
}

func (c *trackedConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *trackedConn) Read(p []byte) (int, error) {
	if err := c.rd.begin(c.Conn, false); err != nil {
		return 0, err
	}
	defer c.rd.end()
	return c.Conn.Read(p)
}
